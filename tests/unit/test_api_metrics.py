"""The API's Prometheus series: one child per (method, route template, status), counted exactly."""

from __future__ import annotations

from services.api.metrics import ApiMetrics


def _sample(metrics: ApiMetrics, name: str, **labels: str) -> float | None:
    return metrics.registry.get_sample_value(name, labels)


def test_observe_counts_each_method_route_and_status_in_its_own_series():
    metrics = ApiMetrics()
    for _ in range(3):
        metrics.observe("POST", "/v1/medias", 201, 0.004)
    metrics.observe("POST", "/v1/medias", 400, 0.002)
    metrics.observe("GET", "/v1/medias", 201, 0.3)
    created = {"method": "POST", "route": "/v1/medias", "status": "201"}
    assert _sample(metrics, "vaeo_http_requests_total", **created) == 3
    assert _sample(metrics, "vaeo_http_requests_total", method="POST", route="/v1/medias", status="400") == 1
    assert _sample(metrics, "vaeo_http_requests_total", method="GET", route="/v1/medias", status="201") == 1
    assert _sample(metrics, "vaeo_http_request_duration_seconds_count", **created) == 3
    assert _sample(metrics, "vaeo_http_request_duration_seconds_bucket", le="0.005", **created) == 3
    assert _sample(metrics, "vaeo_http_request_duration_seconds_bucket", le="0.25",
                   method="GET", route="/v1/medias", status="201") == 0
    assert abs(_sample(metrics, "vaeo_http_request_duration_seconds_sum", **created) - 0.012) < 1e-9
