"""ffprobe and ffmpeg, by concern: ``ffmpeg`` (the only builders and runners of an argument list,
with the container and protocol whitelists), ``probe`` (metadata, playing time, subtitle tracks),
``elements`` (scene changes, silences, loudness, audio frames), ``clips`` (cut, render, thumbnail
and check of a clip) and ``posters`` (a media's picture, a JPEG's size)."""
