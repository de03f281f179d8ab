"""Looking at pictures: the faces of a clip's range (``faces``), for face-following renders."""
