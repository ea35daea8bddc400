"""The TFRecord/Event file format alone: framing, CRCs, wire decoding, the incremental reader, the writer.

Nothing here knows about runs, folders or watching: `reader.EventFileReader` reads one file through
`rltop.ingest.storage` (a local path or an fsspec URL) from a byte offset, and `writer.EventWriter`
writes the records a TensorBoard ``SummaryWriter`` writes (``rltop demo`` and the tests).
"""
