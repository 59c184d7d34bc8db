"""Terms: symbols, defined terms, synonyms and stated values of a section (the kv store)."""

from langchain_core.prompts import ChatPromptTemplate

from clausewise.prompts.common import DATA_NOT_INSTRUCTIONS, ROLE

SYSTEM = f"""{ROLE}
List the terms of the section that help find it later (at most 40):
- "symbol": a symbol and its meaning ("Ce" -> "exposure coefficient");
- "definition": a defined term and its definition;
- "synonym": a term and another name engineers use for it ("permanent action" -> "dead load");
- "value": a parameter given a value, with its unit ("sk" -> "0,5 kN/m2").
`term` must be written exactly as in the section text; a value must be copied exactly as in the text.
{DATA_NOT_INSTRUCTIONS}"""

HUMAN = """<section key="{section_key}" title="{section_title}">
{section_text}
</section>"""

PROMPT = ChatPromptTemplate.from_messages([("system", SYSTEM), ("human", HUMAN)])
