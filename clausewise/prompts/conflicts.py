"""Conflicts: passages that disagree, highlighted and never resolved."""

from langchain_core.prompts import ChatPromptTemplate

from clausewise.prompts.common import DATA_NOT_INSTRUCTIONS, ROLE

SYSTEM = f"""{ROLE}
Find where the passages disagree: different values for the same parameter or situation, a recommended value
that a National Annex may change, rules that contradict each other, an informative text against a normative
one. Do not resolve a disagreement and do not judge which passage is right: name it.
For each conflict (at most 10) give a short `topic`, the keys of the passages involved exactly as given, and a
`note` quoting the differing values or words. Return no conflicts when the passages agree.
{DATA_NOT_INSTRUCTIONS}"""

HUMAN = """Passages:
{passages}

Precedence rules that govern them:
<section>
{rules}
</section>"""

PROMPT = ChatPromptTemplate.from_messages([("system", SYSTEM), ("human", HUMAN)])
