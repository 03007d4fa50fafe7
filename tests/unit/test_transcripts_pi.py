"""Pi session parsing, without a database."""
import json

from service.transcripts import pi


def session(*messages) -> str:
    lines = [{"type": "session", "version": 3, "id": "p", "timestamp": "2025-07-01T09:00:00Z",
              "cwd": "/work/app"}]
    parent = None
    for n, message in enumerate(messages):
        lines.append({"type": "message", "id": f"e{n}", "parentId": parent,
                      "timestamp": "2025-07-01T09:00:01Z", "message": message})
        parent = f"e{n}"
    return "".join(json.dumps(line) + "\n" for line in lines)


def ran(command, **fields):
    return {"role": "bashExecution", "command": command, "timestamp": 1, "cancelled": False,
            "truncated": False, **fields}


def test_a_command_the_user_ran_reads_as_pi_sends_it_to_its_model():
    t = pi.parse(session(
        {"role": "user", "content": "look around", "timestamp": 1},
        ran("ls", output="a\nb", exitCode=0),
        ran("make", output="boom", exitCode=2),
        ran("sleep 9", output="", exitCode=None, cancelled=True),
        ran("true", output="", exitCode=0),
        ran("find .", output="x", exitCode=0, truncated=True,
            fullOutputPath="/tmp/pi-bash-1.log"),
        ran("cat big", output="y", exitCode=0, truncated=True)), "s.jsonl")
    texts = [turn.blocks[0]["text"] for turn in t.turns if turn.meta.get("bash")]
    assert texts == [
        "Ran `ls`\n```\na\nb\n```",
        "Ran `make`\n```\nboom\n```\n\nCommand exited with code 2",
        "Ran `sleep 9`\n(no output)\n\n(command cancelled)",
        "Ran `true`\n(no output)",
        "Ran `find .`\n```\nx\n```\n\n[Output truncated. Full output: /tmp/pi-bash-1.log]",
        "Ran `cat big`\n```\ny\n```",
    ]
