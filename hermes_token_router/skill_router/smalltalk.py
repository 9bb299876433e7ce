"""Reference lines for messages that need no skill: greetings, thanks, trivia, small talk.

Why: with short queries every message lands near *some* skill trigger ("how many days until
christmas" is near "what is on my schedule tomorrow"), so a plain threshold either misses
real requests or injects on chit-chat. A message whose best small-talk score stands more than
``cfg.smalltalk_z`` standard deviations above the library's scores for it (matcher.standardize)
is treated as needing no skill. The lines are generic on purpose and were not copied from the
benchmark queries.
"""

SMALLTALK = (
    "hello there", "hey, how's it going", "thank you so much", "okay, got it", "sure, continue",
    "never mind", "good night", "who are you", "what can you do", "tell me a fun fact",
    "what is the capital of France", "how old is the universe", "who painted the Mona Lisa",
    "what does this word mean", "how do airplanes fly", "why do cats purr", "what's 12 plus 30",
    "recommend a movie", "I'm bored", "let's chat", "can you explain that again",
    "what did you mean by that",
    "你好呀", "谢谢", "好的", "晚安", "你能做什么", "讲个故事", "中国有多少人口", "这个词是什么意思",
)
