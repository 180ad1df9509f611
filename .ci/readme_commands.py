"""Print the commands of one section of README.md: the ```bash block
under the heading given, exactly as the README shows it. .ci/run runs what
this prints, so CI proves the commands a reader copies."""
import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def section_commands(text, heading):
    """The one ```bash block between ``## heading`` and the next heading."""
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^#|\Z)", text, flags=re.S | re.M)
    if match is None:
        raise SystemExit(f"README.md has no section '## {heading}'")
    blocks = re.findall(r"^```bash\n(.*?)^```", match.group(1), flags=re.S | re.M)
    if len(blocks) != 1:
        raise SystemExit(f"README.md section '## {heading}' has {len(blocks)} bash blocks, not 1")
    return blocks[0]


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: readme_commands.py HEADING")
    sys.stdout.write(section_commands(README.read_text(), sys.argv[1]))
