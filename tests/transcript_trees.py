"""The tools' session folders, laid out as each tool lays them out, built in a test's tmp
folder from this suite's own fixtures (tests/fixtures/transcripts/): Claude Code's
`projects/<project>/<session>.jsonl` (a session with its `<session>/subagents/`, and a
sub-agent file an older version kept beside its sessions), Pi's
`agent/sessions/<cwd>/<ts>_<id>.jsonl`, Codex's `sessions/YYYY/MM/DD/rollout-….jsonl`."""
import shutil
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
PROJECT = "-work-app"


def tool_homes(root: Path) -> dict[str, Path]:
    """{tool: its sessions folder} under `root`; every file there is a session of its own."""
    claude = root / ".claude" / "projects" / PROJECT
    claude.mkdir(parents=True)
    for fixture in sorted((FIXTURES / "claude_code").glob("*.jsonl")):
        shutil.copy(fixture, claude / fixture.name)
    agents = FIXTURES / "claude_code" / "agents"
    shutil.copy(agents / "5c1d9e20-agents.jsonl", claude)
    shutil.copytree(agents / "5c1d9e20-agents", claude / "5c1d9e20-agents")
    shutil.copy(agents / "5c1d9e20-agents" / "subagents" / "agent-c3d4.jsonl",
                claude / "agent-c3d4.jsonl")  # the layout before Claude Code 2.1.2
    pi = root / ".pi" / "agent" / "sessions" / "--work-app--"
    pi.mkdir(parents=True)
    for n, fixture in enumerate(sorted((FIXTURES / "pi").glob("*.jsonl"))):
        shutil.copy(fixture, pi / f"2025-07-0{n + 1}T09-00-00-000Z_{fixture.stem}.jsonl")
    codex = root / ".codex" / "sessions"
    for fixture in sorted((FIXTURES / "codex").glob("*.jsonl")):
        year, month, day = fixture.name[len("rollout-"):].split("T")[0].split("-")
        folder = codex / year / month / day
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(fixture, folder / fixture.name)
    return {"claude-code": claude.parent, "pi": pi.parent, "codex": codex}


SESSIONS = 9 + 4 + 6  # the Claude Code, Pi and Codex sessions tool_homes lays out
SIDE_FILES = 4  # two sub-agents, a compaction helper, the older layout's sub-agent
