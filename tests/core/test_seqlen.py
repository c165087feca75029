import pytest

from inferbench.core.seqlen import parse_seq_len, seq_len_name, shorthand_matches


def test_names_follow_inferencex() -> None:
    assert seq_len_name(1024, 1024) == "1k1k"
    assert seq_len_name(8192, 1024) == "8k1k"
    assert seq_len_name(1024, 8192) == "1k8k"
    assert seq_len_name(1000, 200) == "1000_200"


def test_parse_both_spellings_round_trip() -> None:
    assert parse_seq_len("8k1k") == (8192, 1024)
    assert parse_seq_len(" 1K8K ") == (1024, 8192)
    assert parse_seq_len("1000_200") == (1000, 200)
    for isl, osl in [(1024, 1024), (8192, 1024), (3000, 7)]:
        assert parse_seq_len(seq_len_name(isl, osl)) == (isl, osl)


@pytest.mark.parametrize("bad", ["", "8k", "1k1", "0k1k", "abc", "1_0"])
def test_parse_rejects_garbage(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_seq_len(bad)


def test_one_name_for_1000_1000_as_inferencex_writes_it() -> None:
    # InferenceX's generator: seq_len_itos.get((isl, osl), f"{isl}_{osl}")
    assert seq_len_name(1000, 1000) == "1000_1000"
    assert parse_seq_len("1000_1000") == (1000, 1000)


def test_file_name_shorthand_reads_k_as_1024_or_1000() -> None:
    assert shorthand_matches(1, 1, 1000, 1000) and shorthand_matches(1, 1, 1024, 1024)
    assert shorthand_matches(8, 1, 8192, 1024) and not shorthand_matches(8, 1, 1024, 1024)


def test_inferencex_names_only_its_table() -> None:
    from inferbench.core.seqlen import inferencex_seq_len_name

    assert inferencex_seq_len_name(8192, 1024) == "8k1k"
    assert inferencex_seq_len_name(1024, 1024) == "1k1k"
    assert inferencex_seq_len_name(1024, 8192) == "1024_8192"
