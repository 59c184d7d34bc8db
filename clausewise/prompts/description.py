"""Description: what a table or figure shows, for search and for the answer."""

from langchain_core.prompts import ChatPromptTemplate

from clausewise.prompts.common import DATA_NOT_INSTRUCTIONS, ROLE

SYSTEM = f"""{ROLE}
Describe the table or figure in at most 5 sentences: what it gives, for which situations, its variables or
columns with their units, and the range of its values. Use only what the caption, its text and the citing
sentences say; do not guess values.
{DATA_NOT_INSTRUCTIONS}"""

HUMAN = """<object key="{object_key}" caption="{caption}">
{object_text}
</object>

Sentences of the document that cite it:
<section>
{referring}
</section>"""

PROMPT = ChatPromptTemplate.from_messages([("system", SYSTEM), ("human", HUMAN)])
