"""The behavioural signals from observations (pure): each definition and threshold on synthetic
landmarks, laterality (which a photo cannot show: the real portraits have no hand in view), the
timelines and summaries, rhythm, and the bounds of what is stored."""

from __future__ import annotations

import pytest

from domain.analysis import Segment, analyse
from domain.analysis.article import write_article
from domain.analysis.behavioral import (
    MAX_SEGMENTS,
    BodySeen,
    FaceSeen,
    Observation,
    SeenVideo,
    behaviour_elements,
    clean_row,
    frame_rows,
    pack_row,
    seen_profile,
    unpack_row,
    vision_item_name,
    vision_item_window,
    vision_windows,
)
from domain.pricing import analysis_price, vision_ms, vision_price
from infra.vision.behaviour import hand_side

FACE = FaceSeen(box=(0.45, 0.2, 0.1, 0.2), mouth_open=0.05, mouth_width=0.38, corner_lift=0.0, iris_x=0.0,
                iris_y=0.0, yaw=0.0)


def face(**changes) -> FaceSeen:
    return FaceSeen(**{**{k: getattr(FACE, k) for k in FaceSeen.__slots__}, **changes})


def body(left_wrist=None, right_wrist=None, *, tilt=0.0, nose_x=0.5, depth=0.0) -> BodySeen:
    # the person's left shoulder is on the image's right (a camera facing them)
    return BodySeen(nose=(nose_x, 0.3), left_shoulder=(0.6, 0.5 + tilt), right_shoulder=(0.4, 0.5),
                    shoulder_depth=depth, left_wrist=left_wrist, right_wrist=right_wrist)


def obs(t, face_=FACE, body_=None, hands=(), faces=None, width=1000, height=1000) -> Observation:
    return Observation(t, width, height, faces=(1 if face_ is not None else 0) if faces is None else faces,
                       face=face_, body=body_, hands=hands)


def rows_of(*observations):
    return frame_rows(observations)


def test_gaze_camera_or_away_from_iris_and_yaw():
    rows = rows_of(obs(0), obs(333, face(iris_x=0.6)), obs(667, face(yaw=0.4)), obs(1000, face(iris_y=-0.7)),
                   obs(1333, None))
    assert [r["gaze"] for r in rows] == ["camera", "away", "away", "away", "not_visible"]


def test_expression_smiling_speaking_neutral():
    rows = rows_of(obs(0, face(corner_lift=0.15, mouth_width=0.47)),  # the portrait's smile
                   obs(333, face(corner_lift=0.15, mouth_width=0.35)),  # corners up, mouth narrow: not a smile
                   obs(667, face(mouth_open=0.3)),  # lips apart
                   obs(1000, face(mouth_open=0.12)),  # closing: a change of 0.18
                   obs(1333, face(mouth_open=0.12)),
                   obs(5000, face(mouth_open=0.0)))  # 3.7 s later: not compared
    assert [r["expression"] for r in rows] == ["smiling", "neutral", "speaking", "speaking", "neutral", "neutral"]


def test_posture_upright_leaning_turned_and_not_visible():
    rows = rows_of(obs(0, body_=body()), obs(333, body_=body(tilt=0.1)),  # 27 degrees
                   obs(667, body_=body(nose_x=0.56)),  # nose 0.6 half-widths aside
                   obs(1000, body_=body(depth=1.2)), obs(1333, face(yaw=0.5), body_=body()),
                   obs(1667, body_=None))
    assert [r["posture"] for r in rows] == ["upright", "leaning", "leaning", "turned", "turned", "not_visible"]


def test_gestures_and_laterality_from_the_wrists_relative_to_the_shoulders():
    still = (0.65, 0.8)
    rows = rows_of(obs(0, body_=body(still, (0.35, 0.8))),
                   obs(333, body_=body(still, (0.35, 0.7))),  # right wrist: 0.1 in 1/3 s = 1.5 widths/s
                   obs(667, body_=body(still, (0.35, 0.67))),  # 0.45 widths/s: still
                   obs(1000, body_=body((0.65, 0.7), (0.35, 0.62))),  # left 1.5, right 0.75
                   obs(1333, body_=body((0.65, 0.3), (0.35, 0.62))))  # left above the shoulders
    assert [r["gestures"] for r in rows] == ["still", "animated", "still", "animated", "animated"]
    assert [r["laterality"] for r in rows] == ["none", "right", "none", "both", "left"]
    assert [r["handsAbove"] for r in rows] == [0, 0, 0, 0, 1] and rows[0]["hands"] == 2
    profile = seen_profile(SeenVideo(tuple(rows), 3.0, 1667), 1667)
    # left: 1.5 + 6.0 widths/s, right: 1.5 + 0.45 + 0.75
    assert profile["laterality"]["summary"] == "gestures mostly with the left hand (74 % of hand movement)"
    both = rows_of(*[obs(k * 333, body_=body((0.65, 0.8 - 0.1 * (k % 2)), (0.35, 0.8 - 0.1 * (k % 2))))
                     for k in range(4)])
    assert seen_profile(SeenVideo(tuple(both), 3.0, 1333), 1333)["laterality"]["summary"] == (
        "gestures with both hands alike (left 50 %, right 50 % of hand movement)")
    # the whole person moving (or a cut to another shot) is no gesture: wrists are measured from the shoulders
    moved = BodySeen(nose=(0.8, 0.3), left_shoulder=(0.9, 0.5), right_shoulder=(0.7, 0.5), shoulder_depth=0.0,
                     left_wrist=(0.95, 0.8), right_wrist=(0.65, 0.8))
    assert [r["gestures"] for r in rows_of(obs(0, body_=body(still, (0.35, 0.8))), obs(333, body_=moved))] == [
        "still", "still"]


def test_laterality_is_the_persons_own_side_and_a_mirrored_video_swaps_it():
    """The person gestures with the right hand, which a camera facing them sees on the image's left;
    the mirrored video shows that hand on the image's right, where the pose model sees a left hand."""
    def talk(mirrored: bool):
        x = (lambda v: 1 - v) if mirrored else (lambda v: v)
        out = []
        for k in range(6):
            hand_y = 0.8 if k % 2 == 0 else 0.6
            image_left_wrist, image_right_wrist = (x(0.35), hand_y), (x(0.65), 0.8)
            if mirrored:
                image_left_wrist, image_right_wrist = image_right_wrist, image_left_wrist
            # the pose model names by appearance: the wrist on the image's right is "left"
            out.append(obs(k * 333, body_=body(image_right_wrist, image_left_wrist)))
        return seen_profile(SeenVideo(tuple(frame_rows(out)), 3.0, 2000), 2000)["laterality"]

    assert talk(False)["summary"] == "gestures mostly with the right hand (100 % of hand movement)"
    assert talk(True)["summary"] == "gestures mostly with the left hand (100 % of hand movement)"
    # a detected hand goes to the nearer wrist; a hand far from both is someone else's
    person = body((0.65, 0.8), (0.35, 0.8))
    assert hand_side((0.36, 0.78), "Right", person, 1.0) == "right"
    assert hand_side((0.64, 0.8), "Right", person, 1.0) == "left"
    assert hand_side((0.05, 0.1), "Right", person, 1.0) is None
    assert hand_side((0.5, 0.5), "Left", None, 1.0) == "right"  # no body: the selfie label swapped


def test_proxemics_and_placement_from_the_face():
    rows = rows_of(obs(0, face(box=(0.05, 0.2, 0.08, 0.1))), obs(333, face(box=(0.45, 0.2, 0.15, 0.2))),
                   obs(667, face(box=(0.7, 0.1, 0.3, 0.5))), obs(1000, None))
    assert [r["proxemics"] for r in rows] == ["far", "medium", "close", "not_visible"]
    assert [r["placement"] for r in rows] == ["left", "center", "right", "not_visible"]


def test_nobody_is_not_visible_everywhere_and_nothing_is_guessed():
    rows = rows_of(*[obs(k * 333, None) for k in range(6)])
    profile = seen_profile(SeenVideo(tuple(rows), 3.0, 2000), 2000)
    assert all(r[s] == "not_visible" for r in rows for s in ("gaze", "expression", "posture", "gestures",
                                                             "laterality", "proxemics"))
    assert profile["presence"]["summary"] == "no person is visible"
    assert profile["posture"] == {"summary": "the shoulders are never visible: posture not measured", "shares": {},
                                  "timeline": [{"startMs": 0, "endMs": 2000, "value": "not_visible"}]}
    assert profile["rhythm"]["summary"] == "no person visible: no rhythm"


def test_timelines_summaries_and_rhythm():
    looks = [obs(k * 500, face(iris_x=0.0 if k % 4 else 0.8)) for k in range(8)]  # away at 0 and 2000
    profile = seen_profile(SeenVideo(tuple(frame_rows(looks)), 2.0, 4000), 4000)
    assert [(s["startMs"], s["endMs"], s["value"]) for s in profile["gaze"]["timeline"]] == [
        (0, 500, "away"), (500, 2000, "camera"), (2000, 2500, "away"), (2500, 4000, "camera")]
    assert profile["gaze"]["shares"] == {"camera": 75.0, "away": 25.0}
    assert profile["gaze"]["summary"] == "looks at the camera 75 % of the time the face is visible"
    assert profile["rhythm"]["perSignal"]["gaze"] == 45.0  # 3 changes in 4 s of visible time
    assert len(profile["summaries"]) == 8
    elements = behaviour_elements({"vision": profile})
    assert [e["signal"] for e in elements][:2] == ["presence", "gaze"]
    assert elements[1]["description"] == profile["gaze"]["summary"] and elements[1]["timeline"]


def test_stored_rows_are_bounded_and_checked():
    row = frame_rows([obs(0, body_=body())])[0]
    assert unpack_row(pack_row(row)) == clean_row(row) == row
    hostile = {**row, "t": 5, "faces": 10**9, "gaze": "<script>", "hands": 99, "handsAbove": 50,
               "faceHeight": float("inf"), "moveLeft": -3, "shoulderWidth": "wide"}
    cleaned = clean_row(hostile)
    assert cleaned["faces"] == 20 and cleaned["gaze"] == "not_visible" and cleaned["hands"] == 2
    assert cleaned["handsAbove"] == 2 and cleaned["faceHeight"] == 1.0 and cleaned["moveLeft"] == 0.0
    assert cleaned["shoulderWidth"] is None
    assert clean_row({"t": "x"}) is None and unpack_row([1, 2]) is None and unpack_row("row") is None
    many = [{**row, "t": k * 10, "gaze": ("camera", "away")[k % 2]} for k in range(2 * MAX_SEGMENTS)]
    profile = seen_profile(SeenVideo(tuple(many), 100.0, 20 * MAX_SEGMENTS), 20 * MAX_SEGMENTS)
    assert len(profile["gaze"]["timeline"]) == MAX_SEGMENTS and profile["gaze"]["truncated"] is True


def test_windows_items_and_price():
    assert vision_windows(65_000, 30_000) == [(0, 30_000), (30_000, 60_000), (60_000, 65_000)]
    assert vision_windows(0, 30_000) == []
    name = vision_item_name(2, (60_000, 65_000))
    assert name == "vision-00002-60000-65000" and vision_item_window(name) == (60_000, 65_000)
    with pytest.raises(ValueError):
        vision_item_window("speech-00002-60000-65000")
    assert vision_ms(90_000, 7_200_000, True) == 90_000 and vision_ms(90_000, 60_000, True) == 60_000
    assert vision_ms(90_000, 7_200_000, False) == 0 and vision_price(0) == 0 and vision_price(61_000) == 2
    assert analysis_price(90_000, "standard", 0, vision_ms(90_000, 7_200_000, True)) == 4


def test_the_graph_and_the_article_carry_what_the_picture_shows():
    segments = [Segment(0, 3000, "Heat pumps move heat from the outside air into the house."),
                Segment(3000, 6000, "They use far less electricity than a heater.")]
    rows = frame_rows([obs(k * 333, face(corner_lift=0.15, mouth_width=0.47)) for k in range(18)])
    graph = analyse(segments, language="en", mode="behavioral", seen=SeenVideo(tuple(rows), 3.0, 6000))
    assert graph.behavioral["unavailable"] == {}
    assert graph.behavioral["vision"]["expression"]["summary"] == "smiling 100 % of the time the face is visible"
    assert graph.visual[0]["type"] == "behaviour"
    article = write_article(graph, "journalistic", "en")
    assert "## On screen" in article.to_markdown() and article.to_dict()["on_screen"]["summaries"][0].startswith(
        "a person is visible 100 %")
    assert not any("visible" in s for s in article.body_sentences())  # never passed off as what was said
    no_picture = analyse(segments, language="en", mode="behavioral", seen=SeenVideo(note="the video has no picture"))
    assert no_picture.behavioral["unavailable"]["gaze_direction"] == "the video has no picture"
    assert not [e for e in no_picture.visual if e["type"] == "behaviour"]
    assert "On screen" not in write_article(no_picture, "journalistic", "en").to_markdown()
    assert "On screen" not in write_article(analyse(segments, language="en"), "journalistic", "en").to_markdown()


def test_the_assistant_tells_what_the_picture_shows():
    from domain.agent.actions import summarise
    from domain.agent.planner import plan
    from domain.agent.reply import ActionView, compose

    assert [(a.name, a.arguments) for a in plan("what are the gestures in video 3?").actions] == [
        ("get_visual_elements", {"id": 3})]
    assert [a.name for a in plan("le regard et la posture dans la vidéo 3").actions] == ["get_visual_elements"]
    for question in ("Does the speaker in video 3 look at the camera?", "is she smiling in video 3",
                     "what does the speaker do with his hands in video 3?", "describe the behaviour in video 3",
                     "est-ce qu'elle sourit dans la vidéo 3 ?", "does she keep eye contact in video 3"):
        assert [(a.name, a.arguments) for a in plan(question).actions] == [("get_visual_elements", {"id": 3})], question
    answer = {"data": [{"type": "behaviour", "signal": "gaze", "description": "looks at the camera 62 % of the time"},
                       {"type": "shot", "description": "shot 1, 4.0 s"}]}
    result = summarise("get_visual_elements", {"id": 3}, answer)
    assert result["count"] == 2 and result["on_screen"] == ["looks at the camera 62 % of the time"]
    reply = compose("en", [ActionView("get_visual_elements", {"id": 3}, "ok", result, None)])
    assert reply.endswith("On screen: looks at the camera 62 % of the time."), reply
    assert "on_screen" not in summarise("get_visual_elements", {"id": 3}, {"data": answer["data"][1:]})


@pytest.mark.parametrize(("code", "said", "hesitations"), [
    ("en", ["So, uh, the pump works.", "It is, um, quiet and uh cheap.", "We meet at eight."], 3),
    ("de", ["Also, ähm, die Pumpe läuft.", "Wir treffen uns um acht, äh, Uhr.", "Das ist gut."], 2),  # "um": a word
    ("fr", ["Alors, euh, la pompe marche.", "Ben, elle est silencieuse.", "On se voit à huit heures."], 1),
])
def test_the_hesitations_counted_are_the_languages_sounds_of_hesitation(code: str, said: list[str],
                                                                       hesitations: int) -> None:
    segments = [Segment(k * 4000, k * 4000 + 3500, line) for k, line in enumerate(said)]
    graph = analyse(segments, language=code, mode="behavioral")
    assert graph.behavioral["expressiveness"]["hesitations"] == hesitations
