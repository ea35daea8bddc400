"""The TFRecord/Event file format alone: framing, CRCs, wire decoding, the incremental reader, the writer.

Nothing here knows about runs, folders or watching: `reader.EventFileReader` reads one file through
`rltop.ingest.storage` (a local path or an fsspec URL) from a byte offset, and `writer.EventWriter`
writes the records a TensorBoard ``SummaryWriter`` writes (``rltop demo`` and the tests).

* `bulk` -- decode many Event records at once: numpy for the one-value scalar layouts, Python for the
  rest.
* `crc` -- cRC32C (Castagnoli) as TFRecord uses it, masked, for one buffer or many records at once.
* `cycles` -- records that repeat one cycle of layouts: parse one cycle, decode the rest from its fields
  alone.
* `frames` -- tFRecord framing: find every complete record in a byte buffer, fast and defensively.
* `onevalue` -- vectorised decode of one-value scalar events, the records a SummaryWriter writes per
  scalar.
* `period` -- the shortest period of a sequence (record lengths, record layouts), when it has one.
* `tags` -- an exact tag dictionary for the records of a buffer, remembered across the windows of a
  file.
* `torn` -- the records hidden in the claimed span of a record whose payload CRC fails.
* `wire` -- a small protobuf wire decoder for TensorBoard's ``Event`` messages (no protobuf import).

* ``fast/`` -- the vectorised tier of the event-file reader, behind one switch; ignore it unless you
  work on speed.
* `records` -- decode many Event records at once, the plain way or through the vectorised tier.
"""
