"""Reading TensorBoard event files: discovery, the incremental TFRecord/Event reader, loading.

No Textual and no Rich here: this layer runs in threads and in headless commands.
"""
