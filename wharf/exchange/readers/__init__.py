"""The import readers: one per family of formats, each from a spooled file on disk to a
unit document (:mod:`wharf.exchange.formats`), within :class:`~wharf.exchange.import_errors.Limits`.

None of them executes or fetches anything: calamine, python-docx and python-pptx read the
package's parts and ignore macros (``vbaProject.bin``), external links and linked data;
python-docx and python-pptx parse XML with entity resolution off and lxml's default depth
and size guards (deeper nesting is a parse error: ``corrupt_file``)."""
