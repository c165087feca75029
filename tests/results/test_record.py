from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from results_fixtures import write_run_dir

from inferbench.core.errors import InputError
from inferbench.results.ingest import ingest_paths
from inferbench.results.record import SCHEMA_VERSION, Record, record_from_json
from inferbench.results.store import open_store


def a_record(tmp_path: Path) -> Record:
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    ingest_paths([write_run_dir(tmp_path / "runs", failed_job=False)], url)
    return open_store(url).query()[0].record


def test_round_trip_and_keys(tmp_path: Path) -> None:
    rec = a_record(tmp_path)
    again = record_from_json(rec.model_dump_json())
    assert again == rec and again.natural_key() == rec.natural_key()
    moved = rec.model_copy(update={"provenance": rec.provenance.model_copy(update={"run_id": "x"})})
    assert moved.natural_key() != rec.natural_key() and moved.point_key() == rec.point_key()
    bumped = rec.identity.model_copy(update={"image": "lmsysorg/sglang:v0.6.0"})
    assert rec.model_copy(update={"identity": bumped}).point_key() == rec.point_key()
    assert rec.model_copy(update={"identity": bumped}).natural_key() != rec.natural_key()


def test_keys_follow_a_copied_identity(tmp_path: Path) -> None:
    rec = a_record(tmp_path)
    rec.point_key()  # the identity's dump is cached now
    other = rec.identity.model_copy(update={"concurrency": rec.identity.concurrency + 1})
    moved = rec.model_copy(update={"identity": other})
    assert moved.point_key() != rec.point_key() and moved.natural_key() != rec.natural_key()
    assert moved.point_key() == record_from_json(moved.model_dump_json()).point_key()


def test_v1_records_stay_readable(tmp_path: Path) -> None:
    data = orjson.loads(a_record(tmp_path).model_dump_json())
    data["schema_version"] = 1
    for key in ("complete", "incomplete_reason", "gate_failure", "achieved_request_rate"):
        del data["metrics"][key]
    for key in ("in_flight_max", "in_flight_mean"):
        del data["metrics"][key]
    old = record_from_json(orjson.dumps(data))
    assert old.schema_version == 1 and old.metrics.complete is None


def test_newer_schema_version_is_refused(tmp_path: Path) -> None:
    data = orjson.loads(a_record(tmp_path).model_dump_json())
    data["schema_version"] = SCHEMA_VERSION + 1
    with pytest.raises(InputError, match="newer than this inferbench") as exc:
        record_from_json(orjson.dumps(data))
    assert exc.value.hint == "upgrade inferbench to read it"
    data["schema_version"] = "one"
    with pytest.raises(InputError, match="positive integer"):
        record_from_json(orjson.dumps(data))


def test_record_is_frozen_and_strict(tmp_path: Path) -> None:
    rec = a_record(tmp_path)
    with pytest.raises(Exception):  # noqa: B017 - pydantic's frozen-instance error
        rec.provenance.run_id = "changed"  # type: ignore[misc]
    data = orjson.loads(rec.model_dump_json())
    data["identity"]["surprise"] = 1
    with pytest.raises(Exception):  # noqa: B017 - extra fields are forbidden
        Record.model_validate(data)
