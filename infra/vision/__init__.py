"""Seeing the person in a video, on this machine: frames sampled by ffmpeg (``frames``) and what
the legacy MediaPipe solutions find in them (``behaviour``). Nothing is downloaded: the models
ship inside the ``mediapipe`` wheel."""
