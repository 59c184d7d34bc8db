"""Description: what a table or figure shows, for search and for the answer (``PROMPT``, at ingestion, with
the cropped image when there is one), and what a figure of an answer shows for the question asked
(``FIGURE_PROMPT``, with the figure's image)."""

from langchain_core.prompts import ChatPromptTemplate

from clausewise.prompts.common import DATA_NOT_INSTRUCTIONS, ROLE

SYSTEM = f"""{ROLE}
Describe the table or figure in at most 5 sentences: what it gives, for which situations, its variables or
columns with their units, and the range of its values. When an image of the object is attached, read the
values, axes and labels from it. Use only what the image, the caption, its text, the page text and the citing
sentences say; do not guess values.
{DATA_NOT_INSTRUCTIONS}"""

HUMAN = """<object key="{object_key}" caption="{caption}">
{object_text}
</object>

Text of the page the object is on:
<section>
{page_text}
</section>

Sentences of the document that cite it:
<section>
{referring}
</section>"""

PROMPT = ChatPromptTemplate.from_messages([("system", SYSTEM), ("human", HUMAN)])

FIGURE_SYSTEM = f"""{ROLE}
An engineer asked the question below; the attached image is a figure or table of a code that the answer
cites. In at most 4 sentences, say what the image shows that bears on the question: the curve, row or value
that applies, with its units and the conditions it holds for. Use only what the image and its caption show;
do not guess values, and say so when the image does not answer the question.
{DATA_NOT_INSTRUCTIONS}"""

FIGURE_HUMAN = """Question: {question}

<object caption="{caption}">
(the attached image)
</object>"""

FIGURE_PROMPT = ChatPromptTemplate.from_messages([("system", FIGURE_SYSTEM), ("human", FIGURE_HUMAN)])
