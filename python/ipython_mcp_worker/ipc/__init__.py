"""The channel to the parent: frames and codecs, the reader thread and its gate, and the lifeline that ties the worker to its parent."""
