"""References: every cross-reference a section of a code makes."""

from langchain_core.prompts import ChatPromptTemplate

from clausewise.prompts.common import DATA_NOT_INSTRUCTIONS, ROLE

SYSTEM = f"""{ROLE}
List every cross-reference the section makes, each exactly as it is written in the section text:
clauses and paragraphs ("5.2(3)", "4.1", "clause 6.4.3.2"), tables, figures, expressions and annexes
("Table 5.1", "Figure 5.1", "Expression (5.1)", "Annex A"), other documents with any clause they name
("EN 1990", "EN 1991-1-1, 6.3"), and pointers to neighbouring text ("see above", "the following table").
- Copy the characters verbatim; a reference not found word for word in the text is discarded.
- Do not list numbers that are not references: values, units, dates, the section's own number.
{DATA_NOT_INSTRUCTIONS}"""

HUMAN = """<section key="{section_key}">
{section_text}
</section>"""

PROMPT = ChatPromptTemplate.from_messages([("system", SYSTEM), ("human", HUMAN)])
