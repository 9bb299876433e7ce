"""Skill router: inject the SKILL.md a turn confidently needs, hint the next candidates, and
(``skills trim``) keep Hermes's skills index out of the system prompt."""
