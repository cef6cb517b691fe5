"""Word and PowerPoint files to ``doc`` and ``slide`` units: DOCX through python-docx
(body paragraphs, bold and italic runs, the Title, Subtitle and Heading 1-5 styles;
tables, headers, footers, images and comments are not imported), PPTX through
python-pptx (each slide's title and the text of its other shapes with a text frame)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Final
from zipfile import BadZipFile

from wharf.exchange import formats
from wharf.exchange.import_errors import CorruptFile, Limits

_NAMED: Final = {"title": formats.NamedStyle.TITLE, "subtitle": formats.NamedStyle.SUBTITLE,
                 **{f"heading {n}": formats.NamedStyle(formats.NamedStyle.HEADING_1 + n - 1)
                    for n in range(1, 6)}}
# what a malformed package makes the readers raise: lxml's parse errors are SyntaxErrors,
# a missing part a KeyError, python-docx's and python-pptx's own errors (a package that
# is not theirs) plain Exceptions, a wrong structure whatever its traversal meets
_UNREADABLE: Final = (BadZipFile, SyntaxError, KeyError, ValueError, AttributeError,
                      TypeError, IndexError, OSError, NotImplementedError)


def read_docx(path: Path, name: str, limits: Limits) -> dict[str, Any]:
    import docx  # loaded on first use: only import workers read DOCX
    try:
        document = docx.Document(str(path))
        paragraphs = []
        count = 0
        for paragraph in document.paragraphs:
            count += 1
            limits.cells(count)
            style = paragraph.style
            named = _NAMED.get((style.name or "").lower() if style is not None else "",
                               formats.NamedStyle.NORMAL_TEXT)
            runs: list[tuple[str, dict[str, Any]]] = []
            for run in paragraph.runs:
                text = run.text
                if not text:
                    continue
                ts = {**({"bl": 1} if run.bold else {}), **({"it": 1} if run.italic else {})}
                if runs and runs[-1][1] == ts:
                    runs[-1] = (runs[-1][0] + text, ts)
                else:
                    runs.append((text, ts))
            limits.text("".join(t for t, _ in runs), "a paragraph")
            paragraphs.append((runs, int(named)))
    except _UNREADABLE as exc:
        raise CorruptFile(f"the document cannot be read: {type(exc).__name__}: {exc}") from None
    return formats.document(name, paragraphs)


def read_pptx(path: Path, name: str, limits: Limits) -> dict[str, Any]:
    import pptx  # loaded on first use: only import workers read PPTX
    try:
        deck = pptx.Presentation(str(path))
        limits.sheets(len(deck.slides), "slides")
        slides = []
        for slide in deck.slides:
            title_shape = slide.shapes.title
            title = limits.text(title_shape.text_frame.text, "a slide title") \
                if title_shape is not None and title_shape.has_text_frame else ""
            texts = [limits.text(shape.text_frame.text, "a text box")
                     for shape in slide.shapes
                     if shape.has_text_frame and (title_shape is None
                                                  or shape.shape_id != title_shape.shape_id)]
            slides.append((title, texts))
    except _UNREADABLE as exc:
        raise CorruptFile(f"the presentation cannot be read: {type(exc).__name__}: "
                          f"{exc}") from None
    return formats.presentation(name, slides)
