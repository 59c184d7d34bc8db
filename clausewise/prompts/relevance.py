"""Relevance: the verbatim parts of each section that bear on the question."""

from langchain_core.prompts import ChatPromptTemplate

from clausewise.prompts.common import DATA_NOT_INSTRUCTIONS, ROLE

SYSTEM = f"""{ROLE}
For each section below, return the parts that bear on the question, or nothing for a section that does not.
- Quotes must be VERBATIM: copy the exact characters of the section text, with its numbering, symbols, values
  and decimal commas. Do not paraphrase, abbreviate, join distant sentences or use "...". A quote that is not
  found word for word in the section is discarded.
- Quote whole paragraphs or table rows, with the context needed to read them (the paragraph's number, a NOTE
  that qualifies it, the heading of a table's column).
- Be generous: a missed clause is much worse than an extra one. Conditions, exceptions, notes on National
  Annex choices and values an engineer must use are relevant.
- When a section has a focus paragraph (for example "(3)"), another clause referred to it: quote that
  paragraph if it bears on the question at all. A focus of "*" means the section was named or cited as a
  whole: quote all of it.
- In `references`, list the references made by the quoted text exactly as written in it ("Table 5.1",
  "5.2(3)", "EN 1990", "see above"). List only references that are in the quoted text.
- Use each section's key exactly as given.
{DATA_NOT_INSTRUCTIONS}"""

HUMAN = """Question:
<question>
{question}
</question>

Sections:
{sections}"""

PROMPT = ChatPromptTemplate.from_messages([("system", SYSTEM), ("human", HUMAN)])
