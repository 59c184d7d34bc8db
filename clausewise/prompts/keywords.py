"""Keywords: a few search terms for the full-text index of the codes."""

from langchain_core.prompts import ChatPromptTemplate

from clausewise.prompts.common import DATA_NOT_INSTRUCTIONS, ROLE

SYSTEM = f"""{ROLE}
Pick the keywords to look up in a full-text index of the codes: every section containing any keyword is read.
- Give between 1 and 10 keywords or short phrases, written as a design code would write them
  ("imposed load", "exposure coefficient", "Ce", "partial factor").
- Prefer specific technical terms, symbols and clause or table numbers; leave out common words
  ("load", "value", "design", "structure") that would match almost every section.
- Add a code's own term for an everyday one where you know it ("dead load" -> "permanent action").
The related terms come from the store's thesaurus and symbol lists; use those that fit.
{DATA_NOT_INSTRUCTIONS}"""

HUMAN = """Question:
<question>
{question}
</question>

Related terms (word stems, strongest first):
<section>
{related_terms}
</section>"""

PROMPT = ChatPromptTemplate.from_messages([("system", SYSTEM), ("human", HUMAN)])
