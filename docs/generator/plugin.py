"""The plugin's wiring: the hooks and MCP servers it registers, from its own files."""

from __future__ import annotations

import json

from generator._common import HEADER, ROOT


def plugin_wiring() -> str:
    """The hooks and MCP servers the plugin registers, from ``plugin/hooks/hooks.json`` and ``plugin/.mcp.json``."""
    hooks = json.loads((ROOT / "plugin" / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]
    servers = json.loads((ROOT / "plugin" / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]
    lines = [
        HEADER.format(source="plugin/hooks/hooks.json and plugin/.mcp.json"),
        "| Claude Code runs | when | the command (through `scripts/launch`) | time limit |",
        "|---|---|---|---|",
    ]
    for event, entries in hooks.items():
        for entry in entries:
            for hook in entry["hooks"]:
                command = hook["command"].split('scripts/launch" ', 1)[-1]
                matcher = entry.get("matcher")  # a regular expression over the event's source
                when = " or ".join(f"`{m}`" for m in matcher.split("|")) if matcher else "always"
                limit = f"{hook['timeout']} s" if "timeout" in hook else "Claude Code's default"
                lines.append(f"| the {event} hook | {when} | `{command}` | {limit} |")
    for name, server in servers.items():
        lines.append(f"| the MCP server `{name}` | while a session runs | `{' '.join(server['args'])}` | |")
    return "\n".join(lines) + "\n"
