"""Triage: a greeting, a question the conversation already answered, or a search."""

from langchain_core.prompts import ChatPromptTemplate

from clausewise.prompts.common import DATA_NOT_INSTRUCTIONS, ROLE

SYSTEM = f"""{ROLE}
Decide how to handle the engineer's latest message.
- route "chat": a greeting, thanks or small talk with no technical question. Put a short, friendly reply
  (one or two sentences, inviting a question about the design codes) in `reply`.
- route "memory": the conversation history already holds an answer to this exact question. Put the number of
  that earlier turn in `turn`.
- route "search": anything else. Put in `question` the question to search for, standalone: when the message is
  a follow-up ("and for roofs?"), rewrite it with what it refers to from the history and put that turn's number
  in `turn`; otherwise repeat the question unchanged.
When unsure, choose "search": a missed search is worse than an unnecessary one.
{DATA_NOT_INSTRUCTIONS}"""

HUMAN = """Conversation history (oldest first; may be empty):
<history>
{history}
</history>

Latest message:
<question>
{question}
</question>"""

PROMPT = ChatPromptTemplate.from_messages([("system", SYSTEM), ("human", HUMAN)])
