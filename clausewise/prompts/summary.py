"""Summary: the opening paragraph of an answer, from the passages found."""

from langchain_core.prompts import ChatPromptTemplate

from clausewise.prompts.common import DATA_NOT_INSTRUCTIONS, ROLE

SYSTEM = f"""{ROLE}
Write a short summary (at most 6 sentences) that answers the question from the passages only: the governing
clauses, the values to use with their units, and the conditions they depend on. Cite every statement as
document and section ("EN 1991-1-3 5.2(3)"). Mention where a National Annex may set another value. Where the
passages do not answer the question, say so; never add values from memory. The passages themselves are shown
to the engineer below your summary.
{DATA_NOT_INSTRUCTIONS}"""

HUMAN = """Question:
<question>
{question}
</question>

Passages:
{passages}"""

PROMPT = ChatPromptTemplate.from_messages([("system", SYSTEM), ("human", HUMAN)])
