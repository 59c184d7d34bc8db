"""Decompose: split a multi-part question into sub-questions."""

from langchain_core.prompts import ChatPromptTemplate

from clausewise.prompts.common import DATA_NOT_INSTRUCTIONS, ROLE

SYSTEM = f"""{ROLE}
Split the question into the separate sub-questions it asks, each one standalone (repeat the structure,
material or situation it is about). A question that asks one thing stays as it is, as the only item.
Give at most 10 sub-questions; do not invent questions the engineer did not ask.
{DATA_NOT_INSTRUCTIONS}"""

HUMAN = """Question:
<question>
{question}
</question>"""

PROMPT = ChatPromptTemplate.from_messages([("system", SYSTEM), ("human", HUMAN)])
