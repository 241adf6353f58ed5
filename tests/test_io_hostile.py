"""Hostile files: reading must never change values silently (issues 18.5, 18.7, 14.5).

Each test is named after the silent change or crash it pins.  The reference
for every number is Python's own ``float()`` of the raw text (the language's
correctly rounded decimal-to-binary conversion) or the literal written in the
file.
"""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from metaeval.data import read_dataset
from metaeval.errors import DataError

HEADER = "system,input,human,bleu\n"


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


# ----------------------------------------------------------------------------- CSV / TSV
class TestDelimitedStructure:
    def test_repeated_header_was_renamed_bleu_1(self, tmp_path):
        path = write(tmp_path, "s.csv", "system,input,human,bleu,bleu\nA,x,1,2,3\nB,x,2,3,4\n")
        with pytest.raises(DataError, match=r"s\.csv: the header \(line 1\) repeats.*'bleu' in fields 4, 5"):
            read_dataset(path, human="human")

    def test_second_human_column_became_metric_human_1(self, tmp_path):
        path = write(tmp_path, "s.csv", "system,input,human,human\nA,x,1,2\nB,x,2,3\n")
        with pytest.raises(DataError, match=r"repeats column name\(s\): 'human' in fields 3, 4"):
            read_dataset(path, human="human")

    def test_empty_header_name_became_unnamed_metric(self, tmp_path):
        path = write(tmp_path, "s.csv", ",system,input,human\n0,A,x,1\n1,B,x,2\n")
        with pytest.raises(DataError, match=r"header \(line 1\) field\(s\) 1 have no column name"):
            read_dataset(path, human="human")

    def test_short_row_was_padded_with_nan(self, tmp_path):
        path = write(tmp_path, "s.csv", HEADER + "A,x,1,0.5\nB,x,2\nC,x,3,0.7\n")
        with pytest.raises(DataError, match=r"s\.csv: line 3 has 3 comma-separated fields, the header \(line 1\) has 4"):
            read_dataset(path, human="human")

    def test_long_row_became_an_index(self, tmp_path):
        path = write(tmp_path, "s.csv", HEADER + "A,x,1,0.5,9\nB,x,2,0.6,9\n")
        with pytest.raises(DataError, match=r"line 2 has 5 comma-separated fields"):
            read_dataset(path, human="human")

    def test_file_cut_mid_line_loaded_with_nan(self, tmp_path):
        # the full line was "B,x,3.658123,0.61"; the copy stops inside the human value
        path = write(tmp_path, "s.csv", HEADER + "A,x,1,0.5\nB,x,3.658")
        with pytest.raises(DataError, match=r"the last line \(3\) has 3 fields.*no final newline.*truncated"):
            read_dataset(path, human="human")

    def test_last_line_without_newline_but_complete_is_read(self, tmp_path):
        path = write(tmp_path, "s.csv", HEADER + "A,x,1,0.5\nB,x,2,0.25")
        ds = read_dataset(path, human="human")
        np.testing.assert_array_equal(ds.scores("bleu"), [[0.5], [0.25]])

    def test_bare_cr_in_field_split_the_row(self, tmp_path):
        path = write(tmp_path, "s.csv", HEADER + "A,x\r,1,0.5\nB,x,2,0.6\n")
        with pytest.raises(DataError, match=r"s\.csv: line 2 has a carriage return \(\\r\) outside a quoted field"):
            read_dataset(path, human="human")

    def test_cr_inside_quoted_field_and_crlf_endings_are_kept(self, tmp_path):
        path = write(tmp_path, "s.csv", 'system,input,human,bleu\r\nA,"x\ry",1,0.5\r\nB,x,2,0.6\r\n')
        ds = read_dataset(path, human="human")
        assert ds.inputs == ("x\ry", "x")
        np.testing.assert_array_equal(ds.scores("bleu"), [[0.5, np.nan], [np.nan, 0.6]])

    def test_quoted_separator_and_line_break_count_as_one_field(self, tmp_path):
        path = write(tmp_path, "s.csv", HEADER + 'A,"x, with\nbreak",1,0.5\nB,y,2,0.6\n')
        ds = read_dataset(path, human="human")
        assert ds.inputs == ("x, with\nbreak", "y")

    def test_blank_lines_are_skipped_and_line_numbers_stay_physical(self, tmp_path):
        path = write(tmp_path, "s.csv", HEADER + "\nA,x,1,0.5\n\nB,x,2\n")
        with pytest.raises(DataError, match=r"line 5 has 3 comma-separated fields"):
            read_dataset(path, human="human")

    def test_tsv_short_row_was_padded_with_nan(self, tmp_path):
        path = write(tmp_path, "s.tsv", "system\tinput\thuman\tbleu\nA\tx\t1\nB\tx\t2\t3\n")
        with pytest.raises(DataError, match=r"s\.tsv: line 2 has 3 tab-separated fields"):
            read_dataset(path, human="human")

    def test_tsv_repeated_header(self, tmp_path):
        path = write(tmp_path, "s.tsv", "system\tinput\thuman\thuman\nA\tx\t1\t2\n")
        with pytest.raises(DataError, match=r"repeats column name\(s\): 'human'"):
            read_dataset(path, human="human")

    def test_unterminated_quote_is_an_error(self, tmp_path):
        path = write(tmp_path, "s.csv", HEADER + 'A,x,1,0.5\nB,"x,2,0.6\n')
        with pytest.raises(DataError, match=r"s\.csv: line 3"):
            read_dataset(path, human="human")


class TestEncodingAndCompression:
    def test_latin1_decode_error_named_no_file_or_line(self, tmp_path):
        path = write(tmp_path, "s.csv", (HEADER + "A,x,1,0.5\nB,caf\xe9,2,0.6\n").encode("latin-1"))
        with pytest.raises(DataError, match=r"s\.csv: line 3, byte 6 is not UTF-8 \(0xe9\).*iconv"):
            read_dataset(path, human="human")

    def test_utf8_bom_is_not_part_of_the_first_column_name(self, tmp_path):
        path = write(tmp_path, "s.csv", b"\xef\xbb\xbf" + (HEADER + "A,x,1,0.5\n").encode())
        assert read_dataset(path, human="human").systems == ("A",)

    @pytest.mark.parametrize("name", ["s.csv.gz", "s.tsv.gz", "s.jsonl.gz"])
    def test_truncated_gz_raised_eoferror(self, tmp_path, name):
        if name.startswith("s.jsonl"):
            body = '{"system": "A", "input": "x", "human": 1, "bleu": 0.5}\n' * 500
        else:
            body = (HEADER + "A,x,1,0.5\n" * 500).replace(",", "\t" if ".tsv" in name else ",")
        data = gzip.compress(body.encode())
        path = write(tmp_path, name, data[: len(data) // 2])
        with pytest.raises(DataError, match=rf"{name}: the gzip stream is truncated or corrupt"):
            read_dataset(path, human="human")


class TestJsonlValues:
    def test_integer_above_float_range_raised_overflowerror(self, tmp_path):
        line = '{"system": "A", "input": "x", "human": 1, "bleu": 1%s}\n' % ("0" * 400)
        path = write(tmp_path, "s.jsonl", '{"system": "B", "input": "x", "human": 1, "bleu": 2}\n' + line)
        with pytest.raises(DataError, match=r"s\.jsonl: line 2: the integer 1000.*beyond the float range"):
            read_dataset(path, human="human")

    def test_integer_with_5000_digits_hit_the_int_limit(self, tmp_path):
        path = write(tmp_path, "s.jsonl", '{"system": "A", "input": "x", "human": %s}\n' % ("9" * 5000))
        with pytest.raises(DataError, match=r"line 1: the integer 9.*5000 characters"):
            read_dataset(path, human="human")

    def test_float_literal_above_float_range_became_inf(self, tmp_path):
        path = write(tmp_path, "s.jsonl", '{"system": "A", "input": "x", "human": 1e400}\n')
        with pytest.raises(DataError, match=r"line 1: the number 1e400 is beyond the float range"):
            read_dataset(path, human="human")

    def test_deeply_nested_value_raised_recursionerror(self, tmp_path):
        deep = "[" * 200_000 + "]" * 200_000
        path = write(tmp_path, "s.jsonl", '{"system": "A", "input": "x", "human": %s}\n' % deep)
        with pytest.raises(DataError, match=r"s\.jsonl: line 1 nests JSON arrays or objects too deeply"):
            read_dataset(path, human="human")

    def test_repeated_key_kept_the_last_value(self, tmp_path):
        path = write(tmp_path, "s.jsonl", '{"system": "A", "input": "x", "human": 1, "human": 2}\n')
        with pytest.raises(DataError, match=r"line 1: the key 'human' appears twice"):
            read_dataset(path, human="human")

    def test_latin1_jsonl_names_file_and_line(self, tmp_path):
        text = '{"system": "A", "input": "x", "human": 1}\n{"system": "caf\xe9", "input": "x", "human": 2}\n'
        path = write(tmp_path, "s.jsonl", text.encode("latin-1"))
        with pytest.raises(DataError, match=r"s\.jsonl: line 2, byte 16 is not UTF-8"):
            read_dataset(path, human="human")


# ----------------------------------------------------------------------------- exact floats
def _random_float_texts(rng: np.random.Generator, n: int) -> list[str]:
    """Decimal spellings that stress a float parser: shortest reprs of random bit
    patterns, 17 and 25 significant digits, long mantissas near the subnormal
    range, and halfway-looking strings."""
    bits = rng.integers(0, 2**63, 4 * n, dtype=np.int64).view(np.float64)
    bits = bits[np.isfinite(bits)][: n // 4]
    out = [repr(float(v)) for v in bits]
    out += [f"{v:.17g}" for v in rng.uniform(-1e6, 1e6, n // 4)]
    out += [f"{v:.25e}" for v in rng.normal(size=n // 4)]
    rest = n - len(out)
    out += [
        str(int(rng.integers(1, 10)))
        + "".join(map(str, rng.integers(0, 10, 29)))
        + f"e-{int(rng.integers(0, 330))}"
        for _ in range(rest)
    ]
    return out


@pytest.mark.parametrize("sep, name", [(",", "s.csv"), ("\t", "s.tsv"), (",", "s.csv.gz")])
def test_csv_floats_are_read_bit_exactly(tmp_path, sep, name):
    rng = np.random.default_rng(20261125)
    texts = _random_float_texts(rng, 2000)
    lines = [sep.join(["system", "input", "human"])]
    lines += [sep.join(["A", f"i{k}", t]) for k, t in enumerate(texts)]
    body = ("\n".join(lines) + "\n").encode()
    path = write(tmp_path, name, gzip.compress(body) if name.endswith(".gz") else body)
    got = read_dataset(path, human="human").scores("human")[0]
    expected = np.array([float(t) for t in texts])  # Python's correctly rounded conversion
    assert got.view(np.int64).tolist() == expected.view(np.int64).tolist()


def test_jsonl_floats_are_read_bit_exactly(tmp_path):
    rng = np.random.default_rng(7)
    texts = _random_float_texts(rng, 2000)
    body = "".join(
        '{"system": "A", "input": "i%d", "human": %s}\n' % (k, t) for k, t in enumerate(texts)
    )
    got = read_dataset(write(tmp_path, "s.jsonl", body), human="human").scores("human")[0]
    expected = np.array([float(t) for t in texts])
    assert got.view(np.int64).tolist() == expected.view(np.int64).tolist()


def test_truncated_parquet_error_named_no_file(tmp_path):
    pytest.importorskip("pyarrow")
    import pandas as pd

    path = tmp_path / "s.parquet"
    pd.DataFrame({"system": ["A", "B"], "input": ["x", "x"], "human": [1.0, 2.0]}).to_parquet(path)
    path.write_bytes(path.read_bytes()[:-20])
    with pytest.raises(DataError, match=r"s\.parquet: cannot be read as Parquet .*pass the right `format=`"):
        read_dataset(path, human="human")


# ----------------------------------------------------------------------------- slow twin
class _Reject(Exception):
    pass


def _reference_records(text: str, sep: str) -> list[list[str]]:
    """A character-by-character CSV tokenizer written for this test (RFC 4180 quoting,
    as Python's csv with strict=False: text after a closing quote joins the field).
    Rejects a carriage return outside quotes that is followed by more text on its
    line (it would split the row) and a quote left open at the end.  Blank lines
    give no record."""
    records, record, field = [], [], []
    in_quotes = quoted = False
    k, n = 0, len(text)
    while k < n:
        c = text[k]
        if in_quotes:
            if c == '"':
                if k + 1 < n and text[k + 1] == '"':
                    field.append('"')
                    k += 2
                    continue
                in_quotes = False
            else:
                field.append(c)
            k += 1
            continue
        if c == '"' and not field and not quoted:
            in_quotes = quoted = True
        elif c == sep:
            record.append("".join(field))
            field, quoted = [], False
        elif c in "\r\n":
            # a line ends at \n; CRs are accepted only right before it (CRLF, or stray
            # CRs that end the line) or at the very end: they cannot split a row
            j = k
            while j < n and text[j] == "\r":
                j += 1
            if j < n and text[j] != "\n":
                raise _Reject("bare CR")
            if record or field or quoted:
                record.append("".join(field))
                records.append(record)
            record, field, quoted = [], [], False
            k = j + 1
            continue
        else:
            field.append(c)
        k += 1
    if in_quotes:
        raise _Reject("open quote")
    if record or field or quoted:
        record.append("".join(field))
        records.append(record)
    return records


def _random_delimited(rng: np.random.Generator, sep: str) -> str:
    n_cols = int(rng.integers(2, 5))
    alphabet = ["a", "b", "1", "-", ".", " ", sep, '"', "\n", "\r", "\r\n", "é"]
    weights = np.array([6, 3, 6, 1, 1, 1, 1, 1, 1, 0.3, 0.5, 0.5])

    def field() -> str:
        chars = rng.choice(len(alphabet), size=int(rng.integers(0, 5)), p=weights / weights.sum())
        text = "".join(alphabet[c] for c in chars)
        needs = any(ch in text for ch in (sep, '"', "\n", "\r"))
        if needs and rng.random() < 0.85:  # usually quoted properly
            return '"' + text.replace('"', '""') + '"'
        return text

    header = [f"c{j}" if rng.random() > 0.05 else "c0" for j in range(n_cols)]
    lines = [sep.join(header)]
    for _ in range(int(rng.integers(1, 6))):
        if rng.random() < 0.1:
            lines.append("")
            continue
        width = n_cols if rng.random() > 0.15 else int(rng.integers(1, n_cols + 2))
        lines.append(sep.join(field() for _ in range(width)))
    newline = "\r\n" if rng.random() < 0.2 else "\n"
    text = newline.join(lines)
    return text + newline if rng.random() > 0.25 else text


@pytest.mark.parametrize("sep", [",", "\t"])
def test_reader_agrees_with_a_slow_reference_tokenizer(tmp_path, sep):
    """On 400 random files with quotes, separators, CR, CRLF, blank lines, short and
    long rows and repeated headers: the reader accepts exactly the files whose
    reference records all have the header's width (unique, non-empty names), and then
    returns exactly the reference fields ("" is missing)."""
    from metaeval.data._io import read_delimited

    rng = np.random.default_rng(12345 if sep == "," else 54321)
    accepted = rejected = 0
    for case in range(400):
        text = _random_delimited(rng, sep)
        path = tmp_path / f"c{case}.csv"
        path.write_bytes(text.encode("utf-8"))
        try:
            records = _reference_records(text, sep)
            header, rows = records[0], records[1:]
            ok = (len(set(header)) == len(header) and "" not in header
                  and all(len(r) == len(header) for r in rows))
        except _Reject:
            ok = False
        if not ok:
            with pytest.raises(DataError):
                read_delimited(path, [f"c{j}" for j in range(5)], sep=sep)
            rejected += 1
            continue
        frame = read_delimited(path, header, sep=sep)
        assert list(frame.columns) == header, text
        got = [[("" if v is None or (isinstance(v, float) and np.isnan(v)) else v) for v in row]
               for row in frame.astype(object).values.tolist()]
        assert got == rows, repr(text)
        accepted += 1
    assert accepted > 50 and rejected > 50  # both branches exercised


@pytest.mark.parametrize("sep", [",", "\t"])
def test_fast_field_count_agrees_with_the_csv_slow_twin(sep):
    """The NumPy separator count (files without quotes or CR) accepts exactly the
    texts the csv-module check accepts, with the same header, on 600 random texts
    (multi-byte characters, blank lines, short and long rows, missing final newline)."""
    from metaeval.data._io import _check_delimited_slow, _header_if_regular

    rng = np.random.default_rng(99)
    alphabet = ["a", "1", ".", " ", "é", "日", sep, sep]
    agree_ok = 0
    for _ in range(600):
        n_cols = int(rng.integers(1, 5))
        lines = [sep.join(f"h{j}" for j in range(n_cols))]
        for _ in range(int(rng.integers(0, 6))):
            if rng.random() < 0.1:
                lines.append("")
            elif rng.random() < 0.8:
                lines.append(sep.join("".join(rng.choice(alphabet[:6], int(rng.integers(0, 4))))
                                      for _ in range(n_cols)))
            else:
                lines.append("".join(rng.choice(alphabet, int(rng.integers(0, 6)))))
        if rng.random() < 0.1:
            lines.insert(0, "")
        text = "\n".join(lines) + ("\n" if rng.random() < 0.7 else "")
        fast = _header_if_regular(text, sep)
        try:
            slow = _check_delimited_slow(text, sep=sep, name="t.csv")
        except DataError:
            slow = None
        if slow is None:
            assert fast is None, repr(text)
        else:
            assert fast is not None and fast[0] == slow, repr(text)
            agree_ok += 1
    assert 100 < agree_ok < 600
