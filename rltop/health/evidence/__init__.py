"""What the rest of a run says around an episode: the evidence behind "critical" and behind "healthy".

* `signals` -- `RunSignals`: one run's series by concept, their trends and noise, rule episodes, and
  the signs of damage a KL or a value spike needs (the reward falling, drastic updates, …);
* `collapse` -- what an entropy collapse does to a run (completions converging, a reward function
  sacrificed, groups without signal rising, an extreme KL) and what a policy that still learns shows;
* `text` -- what the logged completions show at a finding's step, quoted in its message.
"""
