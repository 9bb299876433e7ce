"""Skill router: keep skills out of the system prompt, inject the SKILL.md a turn needs."""
