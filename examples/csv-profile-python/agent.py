"""The CSV profile agent in Python: takes a CSV file as a `holon://files/` handle and returns its
row count, its columns and the missing values in each. `python agent.py` serves it (the
`holon-kit` package); `holon-test` runs every example of holon.yaml through it, the files from
`files/`."""

import csv
import io

from holon_kit import DownloadError, serve

from holon_types import Ctx, Input, Output, OutputColumnsItem


async def run(input: Input, ctx: Ctx) -> Output:
    """The agent function."""
    try:
        data = await ctx.download(input["file"])
    except DownloadError as e:
        # An expired link, a wrong size or checksum: the caller may upload the file again.
        raise ctx.fail("file_unreadable", str(e)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ctx.fail("not_csv", "the file is not UTF-8") from None
    if not text.strip():
        raise ctx.fail("empty_csv", "the file is empty")
    try:
        records = [r for r in csv.reader(io.StringIO(text, newline=""), delimiter=input.get("delimiter", ",")) if r]
    except csv.Error as e:
        raise ctx.fail("not_csv", str(e)) from None
    header, rows = records[0], records[1:]
    columns: list[OutputColumnsItem] = [{"name": name, "missing": 0} for name in header]
    for at, record in enumerate(rows):
        if len(record) != len(header):
            raise ctx.fail("not_csv", f"record {at + 2} has {len(record)} fields, the header {len(header)}")
        for column, cell in zip(columns, record):
            if not cell.strip():
                column["missing"] += 1
    return {"rows": len(rows), "columns": columns}


if __name__ == "__main__":
    serve(run)
