"""Precedence: rules a section states about which text governs."""

from langchain_core.prompts import ChatPromptTemplate

from clausewise.prompts.common import DATA_NOT_INSTRUCTIONS, ROLE

SYSTEM = f"""{ROLE}
List the precedence rules the section states (at most 10):
- "national-annex": the National Annex may give or choose another value, rule or method;
- "recommended-value": a value is given as a recommendation only;
- "ndp": a nationally determined parameter;
- "informative" or "normative": the status of an annex or a part;
- "supersedes": this document replaces, supersedes or withdraws another;
- "other": any other rule about which text takes precedence.
For each rule give a one-sentence `rule`, and in `evidence` the sentence of the section that states it, copied
verbatim (a rule whose evidence is not found word for word in the text is discarded). When the rule governs
another clause, table or document, put that reference in `applies_to`, exactly as written in the text.
Return no rules when the section states none.
{DATA_NOT_INSTRUCTIONS}"""

HUMAN = """<section key="{section_key}" kind="{section_kind}">
{section_text}
</section>"""

PROMPT = ChatPromptTemplate.from_messages([("system", SYSTEM), ("human", HUMAN)])
