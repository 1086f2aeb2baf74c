"""What a cell outputs: stream capture and sinks, spill files, shell-escape text, images and the matplotlib backend."""
