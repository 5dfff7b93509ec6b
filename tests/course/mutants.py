"""Typical student mistakes: small source patches of the reference solutions.

Each :class:`Mutant` replaces ``old`` by ``new`` (every occurrence) in the complete reference
notebook of its exercise and is graded on ``task``. ``words`` must appear in the failure
message and ``cause`` in the likely cause the checker names (``None``: no cause is asked for).
``CORRECT`` holds rewrites that are right (other algorithms, other numpy calls): they must pass.
``test_mistakes.py`` runs both.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mutant:
    exercise: int
    task: str
    old: str
    new: str
    words: tuple[str, ...] = ()
    cause: str | None = None


M = Mutant

# fmt: off
MUTANTS: list[Mutant] = [
    # -- exercise 1: pull_arm_repeatedly
    # -------------------------------------------------------------
    M(1, 'pull_arm_repeatedly', 'for _ in range(n_steps):',
      'for _ in range(n_steps - 1):',
      ('total regret after 3000 pulls', '900'), 'off-by-one in the pull count'),
    M(1, 'pull_arm_repeatedly', 'for _ in range(n_steps):',
      'for _ in range(n_steps + 1):', ('total regret',), 'off-by-one in the pull count'),
    M(1, 'pull_arm_repeatedly', 'for _ in range(n_steps):',
      'for _ in range(1, n_steps):', ('total regret',), 'off-by-one'),
    M(1, 'pull_arm_repeatedly', 'total_regret += info["regret"]',
      'total_regret += max(info["expected_rewards"]) - reward',
      ('total regret', "info['regret'] adds up to"), 'from the reward you drew'),
    M(1, 'pull_arm_repeatedly', 'total_regret += info["regret"]',
      'total_regret -= info["regret"]', ('total regret',), 'sign'),
    M(1, 'pull_arm_repeatedly', 'total_regret += info["regret"]',
      'total_regret += info["expected_rewards"][arm] - min(info["expected_rewards"])',
      ('total regret',), 'against the wrong arm'),
    M(1, 'pull_arm_repeatedly', 'total_regret += info["regret"]',
      'total_regret += max(info["expected_rewards"]) - info["expected_rewards"][0]',
      ('total regret',), 'against the wrong arm'),
    M(1, 'pull_arm_repeatedly', 'total_regret += info["regret"]',
      'total_regret = info["regret"]', ('total regret',), 'last step only'),
    M(1, 'pull_arm_repeatedly', 'env.reset(seed=seed)',
      'env.reset()', ('same seed',), 'env.reset(seed=seed)'),
    M(1, 'pull_arm_repeatedly', '    env.reset(seed=seed)\n',
      '', ('your code raised ResetNeeded', 'in pull_arm_repeatedly')),
    M(1, 'pull_arm_repeatedly', '_, reward, _, _, info = env.step(arm)',
      'env.reset(seed=seed)\n        _, reward, _, _, info = env.step(arm)',
      ('total reward',), 'reset the environment once'),
    M(1, 'pull_arm_repeatedly', 'total_reward += float(reward)',
      'total_reward = float(reward)', ('total reward',), 'last reward'),
    M(1, 'pull_arm_repeatedly', 'return total_reward, total_regret',
      'return total_regret, total_reward', ('total regret',), 'wrong order'),
    M(1, 'pull_arm_repeatedly', '_, reward, _, _, info = env.step(arm)',
      'reward, _, _, _, info = env.step(arm)', ('total reward',), '2nd item'),
    M(1, 'pull_arm_repeatedly', 'env.step(arm)',
      'env.step(env.action_space.sample())', ('total regret',)),
    # -- exercise 1: update_estimates
    # ----------------------------------------------------------------
    M(1, 'update_estimates', '/ counts[rows, actions]',
      '/ (counts[rows, actions] + 1)',
      ('expected count', 'you returned'), 'N + 1 after incrementing'),
    M(1, 'update_estimates',
      'counts[rows, actions] += 1\n'
      '    means[rows, actions] += (rewards - means[rows, actions]) / counts[rows, actions]',
      'means[rows, actions] += (rewards - means[rows, actions]) / counts[rows, actions]\n'
      '    counts[rows, actions] += 1', (), 'old count'),
    M(1, 'update_estimates', 'counts[rows, actions] += 1',
      'counts[:, actions] += 1', ('but you also changed arm',), 'whole columns'),
    M(1, 'update_estimates', 'means[rows, actions] += (rewards',
      'means[rows, actions] = (rewards', ('expected count',), 'add the step to the old mean'),
    M(1, 'update_estimates',
      'counts[rows, actions] += 1\n'
      '    means[rows, actions] += (rewards - means[rows, actions]) / counts[rows, actions]',
      'means[rows, actions] += (rewards - means[rows, actions]) / (counts[rows, actions] + 1)',
      ('expected count',), 'not incremented'),
    M(1, 'update_estimates',
      'means[rows, actions] += (rewards - means[rows, actions]) / counts[rows, actions]',
      'means[rows, actions] = (means[rows, actions] + rewards) / 2',
      ('expected count',), 'averaging the old mean'),
    M(1, 'update_estimates', '(rewards - means[rows, actions]) / counts',
      'rewards / counts', ('expected count',), 'reward minus the old mean'),
    M(1, 'update_estimates', 'return counts, means', 'return means, counts', (), 'wrong order'),
    # -- exercise 1: epsilon_greedy
    # ------------------------------------------------------------------
    M(1, 'epsilon_greedy', 'random_arms = rng.integers(0, k, size=n_rows)',
      'random_arms = (greedy + rng.integers(1, k, size=n_rows)) % k',
      ('the best arm is chosen with frequency', 'expected', 'chi-square p'),
      'only
      among
      the
      non-greedy
      arms'),
    M(1, 'epsilon_greedy', 'explore
    =
    rng.random(n_rows)
    <
    epsilon',
      'explore = np.full(n_rows, rng.random() < epsilon)', ('frequency',)),
    M(1, 'epsilon_greedy', 'rng.random(n_rows) < epsilon',
      'rng.random(n_rows) > epsilon', ('frequency',), 'probability 1 - epsilon'),
    M(1, 'epsilon_greedy', 'greedy = np.argmax(estimates, axis=1)',
      'greedy = np.argmin(estimates, axis=1)', ('frequency',), 'argmin'),
    M(1, 'epsilon_greedy', 'rng.integers(0, k, size=n_rows)',
      'rng.integers(0, k - 1, size=n_rows)', ('always exploring',), 'never explores arm K - 1'),
    M(1, 'epsilon_greedy', 'rng.integers(0, k, size=n_rows)',
      'rng.integers(1, k, size=n_rows)', ('always exploring',), 'never explores arm 0'),
    M(1, 'epsilon_greedy', 'rng.integers(0, k, size=n_rows)',
      'np.full(n_rows, rng.integers(0, k))', ('every row chose arm',), 'share one random arm'),
    M(1, 'epsilon_greedy', 'rng.random(n_rows)', 'np.random.random(n_rows)', (), '`rng` argument'),
    M(1, 'epsilon_greedy', '    n_rows, k = estimates.shape\n',
      '    n_rows, k = estimates.shape\n    rng = np.random.default_rng(0)\n',
      ('gave the same results',), 'repeats the same draws'),
    M(1, 'epsilon_greedy', 'np.argmax(estimates, axis=1)',
      'np.argmax(estimates, axis=0)', ('shape',)),
    M(1, 'epsilon_greedy', 'rng.integers(0, k, size=n_rows)',
      'rng.integers(1, k + 1, size=n_rows)',
      ('arms are numbered 0 ..',), 'off-by-one in the arm numbers'),
    M(1, 'epsilon_greedy', 'return np.where(explore, random_arms, greedy)',
      'return np.where(explore, greedy, random_arms)', ('frequency',)),
    # -- exercise 1: greedy_regret_rate
    # --------------------------------------------------------------
    M(1, 'greedy_regret_rate', '(means.max() - means.mean())',
      '(means.max() - np.sort(means)[:-1].mean())',
      ('your regret per step is', 'expected'), 'wrong arms'),
    M(1, 'greedy_regret_rate', 'epsilon * (means.max() - means.mean())',
      '(means.max() - means.mean())', ('your regret per step',), 'multiply by epsilon'),
    M(1, 'greedy_regret_rate', 'epsilon * (means.max() - means.mean())',
      '(1 - epsilon) * (means.max() - means.mean())', ('your regret per step',), '1 - epsilon'),
    M(1, 'greedy_regret_rate', '(means.max() - means.mean())',
      '(means.max() - means.min())', ('your regret per step',), 'worst arm'),
    M(1, 'greedy_regret_rate', 'epsilon * (means.max() - means.mean())',
      'epsilon / means.size * (means.max() - means.mean())',
      ('your regret per step',), 'do not divide by K'),
    M(1, 'greedy_regret_rate', 'means = np.asarray(means, dtype=float)',
      'means = np.asarray(means, dtype=float)[10]',
      ('your code raised IndexError', 'ex1_bandit_basics.py, line', 'in greedy_regret_rate')),
    # -- exercise 2: ucb_index
    # -----------------------------------------------------------------------
    M(2, 'ucb_index', 'alpha * np.sqrt(np.log(t) / counts)',
      'alpha * np.log(t) / counts',
      ('your index is', 'S/N + alpha * sqrt(ln t / N)'), 'square root is missing'),
    M(2, 'ucb_index', 'np.log(t)', 'np.log(t + 1)', ('your index is',), 'not t + 1'),
    M(2, 'ucb_index', 'alpha * np.sqrt(np.log(t) / counts)',
      'alpha * np.sqrt(np.log(t))', ('your index is',), 'does not shrink with the count'),
    M(2, 'ucb_index', 'np.sqrt(np.log(t) / counts)',
      'np.sqrt(np.log(t) / t)', ('your index is',), 'does not shrink with the count'),
    M(2, 'ucb_index', 'np.sqrt(np.log(t) / counts)',
      'np.sqrt(np.log(t)) / counts', ('your index is',), 'must cover ln t / N'),
    M(2, 'ucb_index', 'alpha * np.sqrt(np.log(t) / counts)',
      'np.sqrt(alpha * np.log(t) / counts)', ('your index is',), 'alpha multiplies'),
    M(2, 'ucb_index', 'return sums / counts +',
      'return sums / t +', ('your index is',), 'not S / t'),
    M(2, 'ucb_index', 'np.log(t)', 'np.log10(t)', ('your index is',), 'natural logarithm'),
    M(2, 'ucb_index', 'np.sqrt(np.log(t) / counts)',
      'np.sqrt(2 * np.log(t) / counts)', ('your index is',), 'factor 2'),
    M(2, 'ucb_index', 'return sums / counts + alpha',
      'return alpha', ('your index is',), '*plus* the bonus'),
    M(2, 'ucb_index', 'np.log(t) / counts',
      'np.log(t) / (counts + 1)', ('your index is',), 'not N + 1'),
    # -- exercise 2: thompson_choose
    # -----------------------------------------------------------------
    M(2, 'thompson_choose', 'rng.beta(1.0 + successes, 1.0 + failures)',
      'rng.beta(1.0 + failures, 1.0 + successes)',
      ('is chosen with frequency', 'uniform prior'), 'swapped'),
    M(2, 'thompson_choose', 'rng.beta(1.0 + successes, 1.0 + failures)',
      'rng.beta(successes, failures)',
      ('your code raised ValueError', 'ex2_ucb_thompson.py, line')),
    M(2, 'thompson_choose', 'theta = rng.beta(1.0 + successes, 1.0 + failures)',
      'theta = (1.0 + successes) / (2.0 + successes + failures)', (), 'posterior mean'),
    M(2, 'thompson_choose', 'np.argmax(theta, axis=1)',
      'np.argmin(theta, axis=1)', ('is chosen with frequency',), 'argmin'),
    M(2, 'thompson_choose', 'theta = rng.beta(1.0 + successes, 1.0 + failures)',
      'theta = np.tile(rng.beta(1.0 + successes[0], 1.0 + failures[0]), (successes.shape[0], 1))',
      (), 'shared by all rows'),
    M(2, 'thompson_choose', 'rng.beta(1.0 + successes',
      'np.random.beta(1.0 + successes', (), '`rng` argument'),
    M(2, 'thompson_choose', 'rng.beta(1.0 + successes, 1.0 + failures)',
      'rng.beta(1.0 + successes, 1.0 + successes + failures)',
      ('is chosen with frequency',), 'failures only'),
    M(2, 'thompson_choose', 'rng.beta(1.0 + successes, 1.0 + failures)',
      'rng.beta(0.5 + successes, 0.5 + failures)', ('is chosen with frequency',), 'prior'),
    M(2, 'thompson_choose', 'theta = rng.beta(1.0 + successes, 1.0 + failures)',
      'theta = rng.normal((1.0 + successes) / (2.0 + successes + failures),
      1.0
      /
      np.sqrt(3.0
      +
      successes +
      failures))',
      ('is chosen
      with
      frequency',)),
    # -- exercise 2: lai_robbins_constant
    # ------------------------------------------------------------
    M(2, 'lai_robbins_constant',
      'kl = bad * np.log(bad / best) + (1 - bad) * np.log((1 - bad) / (1 - best))',
      'kl = best * np.log(best / bad) + (1 - best) * np.log((1 - best) / (1 - bad))',
      ('your constant is',),
      'not
      symmetric'),
    M(2, 'lai_robbins_constant', 'np.sum((best -
    bad)
    /
    kl)',
      'np.sum(1.0 / kl)', ('your constant is',),
      'gap
      is
      missing'),
    M(2, 'lai_robbins_constant',
      'kl = bad * np.log(bad / best) + (1 - bad) * np.log((1 - bad) / (1 - best))',
      'kl = bad * np.log(bad / best)', ('your constant is',),
      'two
      terms'),
    M(2, 'lai_robbins_constant', 'np.log(', 'np.log2(',
    ('your
    constant
    is',),
    'natural'),
    M(2, 'lai_robbins_constant', 'bad = mu[mu < best]',
      'bad = np.delete(mu, np.argmax(mu))', ('returned NaN',),
      'tied'),
    M(2, 'lai_robbins_constant', 'np.sum((best - bad) / kl)',
      'np.sum((best - bad) ** 2 / kl)', ('your constant is',),
      'gap^2'),
    M(2, 'lai_robbins_constant',
      'kl = bad * np.log(bad / best) + (1 - bad) * np.log((1 - bad) / (1 - best))',
      'kl = (best - bad) ** 2 / 2', ('your constant is',),
      'Gaussian'),
    # -- exercise 3: window_counts_sums
    # --------------------------------------------------------------
    M(3, 'window_counts_sums', '[:, -window:]',
      '[:, -(window + 1) :]',
      ('window = 7', 'the last 7 steps', 'add up to 8 pulls'), 'off-by-one
      in
      the
      pull
      counts'),
    M(3, 'window_counts_sums',
    '[:,
    -window:]',
      '[:, -window + 1 :]', ('window = ',), 'off-by-one
      in
      the
      pull
      counts'),
    M(3, 'window_counts_sums', 'recent_a
    =
    actions[:,
    -window:]',
      'recent_a = actions[:, -window - 1 : -1]', ('window = ',),
      'off-by-one'),
    M(3, 'window_counts_sums', '[:, -window:]', '[:, :window]', ('window = ',),
    '*last*'),
    M(3, 'window_counts_sums', '[:, -window:]',
      '[:, actions.shape[1] - window :]', ('window = 45',),
      'shorter
      than
      the
      window'),
    M(3, 'window_counts_sums', 'sums = (pulled *
    recent_r[:,
    :,
    None]).sum(axis=1)',
      'sums = np.repeat(recent_r.sum(axis=1, keepdims=True), n_arms, axis=1)',
      ('your sums',),
      'per
      arm'),
    M(3, 'window_counts_sums',
    'counts
    =
    pulled.sum(axis=1).astype(float)',
      'counts = pulled.mean(axis=1).astype(float)', ('your
      counts',),
      'not
      frequencies'),
    M(3, 'window_counts_sums',
    'counts
    =
    pulled.sum(axis=1).astype(float)',
      'counts = np.tile(pulled.sum(axis=(0, 1)), (actions.shape[0], 1)).astype(float)',
      ('your
      counts',)),
    # -- exercise 3: sw_ucb_index
    # --------------------------------------------------------------------
    M(3, 'sw_ucb_index',
    'np.log(min(t,
    window))',
      'np.log(t)', ('your index is',), 'min(t,
      window),
      not
      of
      t'),
    M(3, 'sw_ucb_index', 'return np.where(counts >
    0,
    index,
    np.inf)',
      'return index',
      ('must
      have
      index
      +inf',)),
    M(3, 'sw_ucb_index',
    'np.log(min(t,
    window))',
      'np.log(window)', ('your index is',),
      'while
      t
      <
      window'),
    M(3, 'sw_ucb_index', 'np.sqrt(xi * np.log(min(t,
    window))
    /
    safe)',
      'np.sqrt(xi * np.log(min(t, window)))', ('your index is',),
      'does
      not
      shrink'),
    M(3, 'sw_ucb_index', 'bound
    *
    np.sqrt(xi
    *',
      'np.sqrt(bound * xi *', ('your index is',),
      'bound
      multiplies'),
    M(3, 'sw_ucb_index',
    'np.sqrt(xi
    *
    np.log',
      'np.sqrt(np.log', ('your index is',),
      'xi
      is
      missing'),
    M(3, 'sw_ucb_index', 'np.where(counts >
    0,
    index,
    np.inf)',
      'np.where(counts > 0, index, -np.inf)', ('+inf',),
      '+inf,
      not
      -inf'),
    M(3, 'sw_ucb_index', 'np.where(counts >
    0,
    index,
    np.inf)',
      'np.where(counts > 0, index, 0.0)', ('+inf',),
      '+inf'),
    M(3, 'sw_ucb_index', 'np.log(min(t, window))', 'np.log(max(t, window))',
    ('your
    index
    is',)),
    M(3, 'sw_ucb_index', 'index = sums
    /
    safe
    +',
      'index = sums / min(t, window) +', ('your index is',),
      'own
      pulls'),
    # -- exercise 3: ts_stale_probability
    # ------------------------------------------------------------
    M(3, 'ts_stale_probability', 'sd = 1.0 /
    np.sqrt(stale_pulls
    +
    1)',
      'sd = 1.0 / (stale_pulls + 1)', ('your probability is',),
      'wrong
      scale'),
    M(3, 'ts_stale_probability', 'mean = stale_sum /
    (stale_pulls
    +
    1)',
      'mean = stale_sum / stale_pulls', ('your probability is',),
      'not
      S
      /
      N'),
    M(3, 'ts_stale_probability',
    'stats.norm.sf(threshold',
      'stats.norm.cdf(threshold', ('your probability is',),
      'upper
      tail'),
    M(3, 'ts_stale_probability', 'sd = 1.0 /
    np.sqrt(stale_pulls
    +
    1)',
      'sd = 1.0 / np.sqrt(stale_pulls)', ('your probability is',),
      'not
      1
      /
      N'),
    M(3, 'ts_stale_probability',
    'stats.norm.sf(threshold,
    loc=mean,
    scale=sd)',
      'stats.norm.sf(threshold - mean)', ('your probability is',),
      'loc
      and
      scale'),
    M(3, 'ts_stale_probability',
    'stats.norm.sf(threshold,
    loc=mean,
    scale=sd)',
      '1 - stats.norm.cdf((threshold - mean) / sd ** 2)',
      ('your
      probability
      is',)),
    # -- exercise 4: randomized_response
    # -------------------------------------------------------------
    M(4, 'randomized_response', 'np.exp(epsilon) / (np.exp(epsilon) +
    k
    -
    1)',
      'np.exp(epsilon / 2) / (np.exp(epsilon / 2) + k - 1)',
      ('your randomized response with K = 2 at eps = 1', 'the true answer (the argmax)',
      'frequency
      0.62', 'expected
      0.731',
      'chi-square
      p'),
      'eps/2'),
    M(4, 'randomized_response',
      'other = rng.integers(0, k - 1, size=n_rows)\n'
      '    other = other + (other >= best)',
      'other = rng.integers(0, k, size=n_rows)',
      ('the true answer (the argmax) is chosen with frequency', 'expected 0.731'),
      'K
      -
      1
      *others*'),
    M(4, 'randomized_response', 'np.exp(epsilon) / (np.exp(epsilon)
    +
    k
    -
    1)',
      'np.exp(epsilon) / (np.exp(epsilon) + k)', ('your randomized response',), 'denominator'),
    M(4, 'randomized_response',
      '    other = other + (other >= best)  # skip the argmax: uniform over the K - 1 others\n',
      '', ('your randomized response',), 'K - 1 *others*'),
    M(4, 'randomized_response', 'best = np.argmax(q, axis=1)',
      'best = np.argmin(q, axis=1)', ('your randomized response',), 'argmin'),
    M(4, 'randomized_response', 'keep = rng.random(n_rows) <',
      'keep = rng.random() <', ('your randomized response',), 'whole batch'),
    M(4, 'randomized_response', 'np.exp(epsilon) / (np.exp(epsilon) + k - 1)',
      'np.exp(2 * epsilon) / (np.exp(2 * epsilon) + k - 1)',
      ('your randomized response',), '2 eps'),
    M(4, 'randomized_response', 'np.exp(epsilon) / (np.exp(epsilon) + k - 1)',
      'np.exp(epsilon) / (np.exp(epsilon) + 1)', ('your randomized response',), 'binary'),
    M(4, 'randomized_response', 'keep = rng.random(n_rows)',
      'keep = np.random.random(n_rows)', (), '`rng` argument'),
    M(4, 'randomized_response', 'keep = rng.random(n_rows) <',
      'keep = rng.random(n_rows) >', ('your randomized response',), 'argmin'),
    # -- exercise 4: report_noisy_max
    # ----------------------------------------------------------------
    M(4, 'report_noisy_max', 'scale = 2.0 * d.max(axis=1, keepdims=True) / epsilon',
      'scale = d.max(axis=1, keepdims=True) / epsilon',
      ('your report noisy max on q = [0, 0.5, 1]', 'chi-square p'), 'factor 2 is missing'),
    M(4, 'report_noisy_max', 'scale = 2.0 * d.max(axis=1, keepdims=True) / epsilon',
      'scale = 2.0 * d / epsilon', ('d = [0.1, 0.5, 0.2, 0.3]',), 'RNMH'),
    M(4, 'report_noisy_max', 'rng.gumbel(size=q.shape)',
      'rng.laplace(size=q.shape)', ('is chosen with frequency',), 'Laplace'),
    M(4, 'report_noisy_max', 'd.max(axis=1, keepdims=True)',
      'd.max()', ('a batch mixing two problems',), 'whole batch'),
    M(4, 'report_noisy_max', 'scale = 2.0 * d.max(axis=1, keepdims=True) / epsilon',
      'scale = 2.0 / epsilon', ('your report noisy max',), 'ignores the sensitivities'),
    M(4, 'report_noisy_max', 'noisy = q + rng.gumbel',
      'noisy = q - rng.gumbel', ('your report noisy max',), 'not subtracted'),
    M(4, 'report_noisy_max', 'return np.argmax(noisy, axis=1)',
      'return np.argmin(noisy, axis=1)', ('your report noisy max',), 'argmin'),
    M(4, 'report_noisy_max', 'd.max(axis=1, keepdims=True)',
      'd.mean(axis=1, keepdims=True)', ('your report noisy max',), 'mean sensitivity'),
    M(4, 'report_noisy_max', 'd.max(axis=1, keepdims=True) / epsilon',
      'd.max(axis=1, keepdims=True) * epsilon', ('your report noisy max',), 'multiplies by eps'),
    M(4, 'report_noisy_max', 'rng.gumbel(size=q.shape)',
      'rng.gumbel(size=q.shape[1])', ('every row chose candidate',), 'share one draw'),
    M(4, 'report_noisy_max', 'scale = 2.0 * d.max(axis=1, keepdims=True) / epsilon',
      'scale = 4.0 * d.max(axis=1, keepdims=True) / epsilon',
      ('your report noisy max',), '4 D / eps'),
    M(4, 'report_noisy_max', 'rng.gumbel(size=q.shape)',
      'np.random.gumbel(size=q.shape)', (), '`rng` argument'),
    M(4, 'report_noisy_max', 'rng.gumbel(size=q.shape)',
      'rng.exponential(size=q.shape)', ('your report noisy max',)),
    # -- exercise 4: privacy_loss
    # --------------------------------------------------------------------
    M(4, 'privacy_loss', 'return float(np.inf)',
      'return 0.0', ('your loss is 0, expected inf',), 'infinite loss'),
    M(4, 'privacy_loss', 'np.abs(np.log(p[seen]) - np.log(p_prime[seen]))',
      'np.log(p[seen]) - np.log(p_prime[seen])', ('your loss is',), 'both directions'),
    M(4, 'privacy_loss', 'np.max(np.abs(np.log(p[seen]) - np.log(p_prime[seen])))',
      'np.max(np.maximum(p[seen] / p_prime[seen], p_prime[seen] / p[seen]))',
      ('your loss is',), 'log-ratio'),
    M(4, 'privacy_loss', 'float(np.max(np.abs(',
      'float(np.mean(np.abs(', ('your loss is',), 'not their mean'),
    M(4, 'privacy_loss', 'np.log(p[seen]) - np.log(p_prime[seen])',
      'np.log10(p[seen]) - np.log10(p_prime[seen])', ('your loss is',), 'natural'),
    M(4, 'privacy_loss', 'seen = (p > 0) | (p_prime > 0)',
      'seen = np.ones(p.shape, dtype=bool)', ('your loss is inf',), 'impossible under both'),
    M(4, 'privacy_loss',
      '    if np.any(seen & ((p == 0) | (p_prime == 0))):\n'
      '        return float(np.inf)\n',
      '    seen = (p > 0) & (p_prime > 0)\n', ('your loss is',), 'infinite loss'),
    # -- exercise 4: audit
    # ---------------------------------------------------------------------------
    M(4, 'audit', 'np.exp(epsilon) / (np.exp(epsilon) + k - 1)',
      'np.exp(2 * epsilon) / (np.exp(2 * epsilon) + k - 1)',
      ('privacy audit', 'your randomized_response is not 1-DP', 'at least'), 'e^eps'),
    M(4, 'audit', 'scale = 2.0 * d.max(axis=1, keepdims=True) / epsilon',
      'scale = 2.0 * d / epsilon', ('your report_noisy_max is not 1-DP',), 'scale of its own'),
    M(4, 'audit', 'scale = 2.0 * d.max(axis=1, keepdims=True) / epsilon',
      'scale = 0.5 * d.max(axis=1, keepdims=True) / epsilon',
      ('your report_noisy_max is not 1-DP',), 'wrong scale'),
    # -- exercise 4: expected_utility_krr
    # ------------------------------------------------------------
    M(4, 'expected_utility_krr', 'others_mean = (q.sum() - best) / (k - 1)',
      'others_mean = q.mean()', ('your utility is',), 'without the best'),
    M(4, 'expected_utility_krr', 'p_best = np.exp(epsilon) / (np.exp(epsilon) + k - 1)',
      'p_best = np.exp(epsilon) / (np.exp(epsilon) + k)', ('your utility is',), 'denominator'),
    M(4, 'expected_utility_krr', ' + (1 - p_best) * others_mean',
      '', ('your utility is',), 'also score'),
    M(4, 'expected_utility_krr', 'others_mean = (q.sum() - best) / (k - 1)',
      'others_mean = q.min()', ('your utility is',), 'not the worst'),
    M(4, 'expected_utility_krr', 'others_mean = (q.sum() - best) / (k - 1)',
      'others_mean = (q.sum() - best) / k', ('your utility is',), 'not K'),
    M(4, 'expected_utility_krr', 'np.exp(epsilon) / (np.exp(epsilon) + k - 1)',
      'np.exp(epsilon / 2) / (np.exp(epsilon / 2) + k - 1)', ('your utility is',), 'wrong eps'),
    # -- exercise 5: dyadic_decomposition
    # ------------------------------------------------------------
    M(5, 'dyadic_decomposition', '(n >> level) - 1)',
      '(n >> level))',
      ('for n = 13 your nodes are', 'items 1-8, 9-12, 13-13'), 'off-by-one in the node index'),
    M(5, 'dyadic_decomposition', 'range(n.bit_length())',
      'range(n.bit_length() - 1)', ('your nodes are',), 'top level is missing'),
    M(5, 'dyadic_decomposition', '(level, (n >> level) - 1) for',
      '((n >> level) - 1, level) for', ('your nodes are',), '(level, index)'),
    M(5, 'dyadic_decomposition', ' if (n >> level) & 1]', ']', ('your nodes are',), '*set* bit'),
    M(5, 'dyadic_decomposition', '(level, (n >> level) - 1) for',
      '(level, (n - 1) >> level) for', ('your nodes are',), 'wrong index'),
    M(5, 'dyadic_decomposition', 'if (n >> level) & 1]',
      'if ((n - 1) >> level) & 1]', ('your nodes are',), 'bits of n - 1'),
    # -- exercise 5: binary_mechanism
    # ----------------------------------------------------------------
    M(5, 'binary_mechanism', 'out[n - 1] = total',
      'out[n - 1] = total - x[n - 1]', ('eps = 1e9', 'the true prefix sum'), 'off-by-one'),
    M(5, 'binary_mechanism', 'levels = horizon.bit_length()',
      'levels = int(np.ceil(np.log2(horizon)))',
      ('L = 6 levels', 'expected Laplace noise of scale 3', 'Kolmogorov-Smirnov p'),
      'ceil(log2
      T)'),
    M(5, 'binary_mechanism', 'if (level,
    index)
    not
    in
    noise:',
      'if True:', ('share the node', 'covariance'), 'fresh noise at every release'),
    M(5, 'binary_mechanism', 'rng.laplace(scale=levels / epsilon)',
      'rng.laplace(scale=1.0 / epsilon)',
      ('expected Laplace noise of scale 3',), 'wrong eps split'),
    M(5, 'binary_mechanism', 'rng.laplace(scale=levels / epsilon)',
      'rng.laplace(scale=levels * epsilon)', ('eps = 1e9',), 'multiplies by eps'),
    M(5, 'binary_mechanism', '(level, index)', 'level', ('share no node',), 'one noise per level'),
    M(5, 'binary_mechanism', 'rng.laplace(scale=levels / epsilon)',
      'rng.laplace(scale=n.bit_length() / epsilon)',
      ('expected Laplace noise',), 'fixed by the horizon'),
    M(5, 'binary_mechanism', 'rng.laplace(scale=levels / epsilon)',
      'rng.normal(scale=levels / epsilon)', ('expected Laplace noise',), 'Gaussian'),
    M(5, 'binary_mechanism', 'levels = horizon.bit_length()',
      'levels = np.log2(horizon)', ('expected Laplace noise',), 'ceil(log2 T)'),
    M(5, 'binary_mechanism', 'rng.laplace(scale=levels / epsilon)',
      'np.random.laplace(scale=levels / epsilon)', (), '`rng` argument'),
    M(5, 'binary_mechanism', 'rng.laplace(scale=levels / epsilon)',
      'rng.laplace(scale=levels / (2 * epsilon))', ('expected Laplace noise',), 'L / (2 eps)'),
    M(5, 'binary_mechanism', 'total += prefix[end] - prefix[start] + noise[(level, index)]',
      'total += prefix[end] - prefix[start] + noise[(level, index)] / levels',
      ('expected Laplace noise',)),
    # -- exercise 5: naive_prefix_sums
    # ---------------------------------------------------------------
    M(5, 'naive_prefix_sums', 'scale=1.0 / epsilon',
      'scale=2.0 / epsilon', ('expected Laplace noise of scale 0.5',), '2 / eps'),
    M(5, 'naive_prefix_sums', 'np.cumsum(x + rng.laplace(scale=1.0 / epsilon, size=x.size))',
      'np.cumsum(x) + rng.laplace(scale=1.0 / epsilon, size=x.size)',
      ('release at n = 32',), 'wrong quantity'),
    M(5, 'naive_prefix_sums', 'np.cumsum(x + rng.laplace(scale=1.0 / epsilon, size=x.size))',
      'x + rng.laplace(scale=1.0 / epsilon, size=x.size)',
      ('the true prefix sum',), 'running sums'),
    M(5, 'naive_prefix_sums', 'rng.laplace(scale=1.0 / epsilon, size=x.size)',
      'rng.laplace(scale=1.0 / epsilon)',
      ('times the error of the first one',), 'one noise shared by all items'),
    M(5, 'naive_prefix_sums', 'scale=1.0 / epsilon',
      'scale=epsilon', ('eps = 1e9',), 'multiplies by eps'),
    M(5, 'naive_prefix_sums', 'rng.laplace(scale=1.0 / epsilon, size=x.size)',
      'rng.normal(scale=1.0 / epsilon, size=x.size)', ('expected Laplace noise',), 'Gaussian'),
    M(5, 'naive_prefix_sums', 'scale=1.0 / epsilon',
      'scale=x.size / epsilon', ('expected Laplace noise',), 'T / eps'),
    M(5, 'naive_prefix_sums', 'rng.laplace(scale=1.0 / epsilon, size=x.size)',
      'np.random.laplace(scale=1.0 / epsilon, size=x.size)', (), '`rng` argument'),
    # -- exercise 6: permute_and_flip
    # ----------------------------------------------------------------
    M(6, 'permute_and_flip', 'order = np.argsort(rng.random((n_rows, k)), axis=1)',
      'order = np.tile(np.arange(k), (n_rows, 1))',
      ('your permute-and-flip on q =', 'chi-square p'), 'no random order'),
    M(6, 'permute_and_flip', 'scale = 2.0 * d.max(axis=1, keepdims=True)',
      'scale = 2.0 * d.min(axis=1, keepdims=True)', ('d = [0.1, 0.5, 0.2, 0.3]',), 'smallest d'),
    M(6, 'permute_and_flip', 'scale = 2.0 * d.max(axis=1, keepdims=True)',
      'scale = d.max(axis=1, keepdims=True)', ('your permute-and-flip',), 'factor 2'),
    M(6, 'permute_and_flip', 'return order[np.arange(n_rows), first]',
      'return first', ('your permute-and-flip',), 'position in the order'),
    M(6, 'permute_and_flip', '(q - q.max(axis=1, keepdims=True))',
      'q', ('your permute-and-flip',), 'subtracting max q'),
    M(6, 'permute_and_flip', 'order = np.argsort(rng.random((n_rows, k)), axis=1)',
      'order = np.tile(rng.permutation(k), (n_rows, 1))',
      ('your permute-and-flip',), 'random order'),
    M(6, 'permute_and_flip', 'scale = 2.0 * d.max(axis=1, keepdims=True)',
      'scale = 2.0 * d', ('your permute-and-flip',), 'own d_a'),
    M(6, 'permute_and_flip', 'd.max(axis=1, keepdims=True)',
      'd.max()', ('a batch mixing two problems',), 'whole batch'),
    M(6, 'permute_and_flip', 'q.max(axis=1, keepdims=True)',
      'q.max()', ('a batch mixing two problems',), 'whole batch'),
    M(6, 'permute_and_flip', 'p_accept[rows, order]',
      'p_accept', ('your permute-and-flip',), 'p[row, order]'),
    M(6, 'permute_and_flip', 'accepted = rng.random((n_rows, k)) <',
      'accepted = rng.random((n_rows, k)) >', ('your permute-and-flip',), 'not 1 - p_a'),
    M(6, 'permute_and_flip', 'np.exp(epsilon * (q', 'np.exp((q', ('your permute-and-flip',)),
    M(6, 'permute_and_flip', 'rng.random((n_rows, k)) <',
      'np.random.random((n_rows, k)) <', (), '`rng` argument'),
    M(6, 'permute_and_flip', 'scale = 2.0 * d.max(axis=1, keepdims=True)',
      'scale = 2.0', ('your permute-and-flip',), 'ignores the sensitivities'),
    # -- exercise 6: make_agent
    # ----------------------------------------------------------------------
    M(6, 'make_agent', 'name="my_pf", epsilon=epsilon)',
      'name="my_pf", epsilon=1.0)',
      ('make_agent(0.5) has a selector with epsilon 1, expected 0.5',), 'not a constant'),
    M(6, 'make_agent', 'return agents.PrivateAgent(selector)',
      'return agents.PrivateAgent("krr", epsilon_select=epsilon)',
      ("make_agent(0.5)'s selector is the library's",), 'a library selector'),
    M(6, 'make_agent', 'name="my_pf", epsilon=epsilon)',
      'name="my_pf", epsilon=epsilon / 2)', ('expected 0.5',), 'eps split'),
    M(6, 'make_agent', 'return agents.PrivateAgent(selector)',
      'return agents.PrivateAgent(selector, epsilon_means=epsilon)',
      ("keep the agent's default epsilon_means",), 'eps split'),
    M(6, 'make_agent', 'return agents.PrivateAgent(selector)',
      'return selector', ('must return an agents.PrivateAgent',), 'not the selector itself'),
    M(6, 'make_agent', 'return agents.PrivateAgent(selector)',
      'return agents.PrivateAgent("permute_and_flip", epsilon_select=epsilon)',
      ("is the library's",), 'a library selector'),
    M(6, 'make_agent', 'selectors.from_function(permute_and_flip, name="my_pf", epsilon=epsilon)',
      'selectors.from_function(lambda q, d, e,
      g:
      np.argmax(q,
      axis=1),
      name="my_pf",
      epsilon=epsilon)',
      ("make_agent(0.5)'s selector on q",), 'your permute_and_flip'),
    M(6, 'make_agent', 'return agents.PrivateAgent(selector)',
      'return agents.PrivateAgent(selector, window=100)', ("keep the agent's default window",)),
    # -- exercise 6: compare
    # -------------------------------------------------------------------------
    M(6, 'compare', '"t_shift": 3 * horizon // 5',
      '"t_shift": horizon // 2', ('t_shift = 3 * horizon // 5 = 240',)),
    M(6, 'compare', 'players[f"PF eps={eps:g}"]',
      'players[f"PF {eps}"]', ("missing ['PF eps=0.5', 'PF eps=4']",), 'exactly'),
    M(6, 'compare', '"UCB": agents.UCB(log="t")', '"UCB": agents.UCB()', ("agents.UCB(log='t')",)),
    M(6, 'compare', 'seed=seed, n_jobs=1',
      'seed=0, n_jobs=1', ('ran 3 runs with seed 0',), 'n_runs and seed'),
    M(6, 'compare', '"horizon": horizon}',
      '"horizon": 10_000}', ('horizon = 400',), "compare's arguments"),
    M(6, 'compare', 'n_runs=n_runs, seed', 'n_runs=20, seed', ('ran 20 runs',), 'n_runs and seed'),
    M(6, 'compare', 'make_agent(eps)',
      'make_agent(epsilons[0])', ('selects with eps_S = 0.5',), 'its own eps'),
    M(6, 'compare', '"TS": agents.ThompsonSampling()',
      '"TS": agents.ThompsonSampling(model="bernoulli")', ('agents.ThompsonSampling()',)),
    M(6, 'compare', '"TS": agents.ThompsonSampling()',
      '"TS": agents.UCB()', ('agents.ThompsonSampling()',)),
    M(6, 'compare', '"id": "dpbandits/TwoArmedShift-v0"',
      '"id": "dpbandits/KArmedBernoulli-v0"', ('your code raised TypeError', 't_shift')),
]

CORRECT:
list[Mutant]
=
[
    M(1, 'pull_arm_repeatedly',
      'for _ in range(n_steps):\n'
      '        _, reward, _, _, info = env.step(arm)',
      't = 0\n    while t < n_steps:\n        t += 1\n        _, reward,
      _,
      _,
      info
      =
      env.step(arm)'),
    M(1, 'update_estimates', '    counts = counts.copy()\n   
    means
    =
    means.copy()\n',
    ''),
    M(1, 'update_estimates',
      '    rows = np.arange(counts.shape[0])\n'
      '    counts[rows, actions] += 1\n'
      '    means[rows, actions] += (rewards - means[rows, actions]) / counts[rows, actions]\n',
      '    for i, a in enumerate(actions):\n' '        counts[i, a] = counts[i, a] + 1\n'
      '        means[i, a] = means[i, a] + (rewards[i] - means[i, a]) / counts[i, a]\n'),
    M(1, 'epsilon_greedy', 'random_arms =
    rng.integers(0,
    k,
    size=n_rows)',
      'random_arms = rng.choice(k, size=n_rows)'),
    M(1, 'epsilon_greedy', 'explore =
    rng.random(n_rows)
    <
    epsilon',
      'explore = rng.binomial(1, epsilon, size=n_rows).astype(bool)'),
    M(1, 'greedy_regret_rate', 'epsilon *
    (means.max()
    -
    means.mean())',
      'epsilon * (means.size - 1) / means.size * (means.max()
      -
      np.sort(means)[:-1].mean())'),
    M(2, 'ucb_index', 'return sums / counts + alpha *
    np.sqrt(np.log(t)
    /
    counts)',
      'mean = np.divide(sums, counts)\n    return mean + alpha * (np.log(t) / counts) ** 0.5'),
    M(2, 'thompson_choose', 'theta = rng.beta(1.0 + successes,
    1.0
    +
    failures)',
      'x = rng.gamma(1.0 + successes)\n    theta = x / (x + rng.gamma(1.0 + failures))'),
    M(2, 'lai_robbins_constant', 'return float(np.sum((best -
    bad)
    /
    kl))',
      'return sum(float(g / k) for g, k in zip(best - bad, kl))'),
    M(3, 'window_counts_sums',
      '    recent_a = actions[:, -window:]\n'
      '    recent_r = rewards[:, -window:]\n',
      '    start = max(actions.shape[1] - window, 0)\n' '    recent_a = actions[:, start:]\n'
      '    recent_r = rewards[:, start:]\n'),
    M(3, 'sw_ucb_index', 'return np.where(counts >
    0,
    index,
    np.inf)',
      'index[counts == 0] = np.inf\n    return index'),
    M(3, 'ts_stale_probability', 'return
    float(stats.norm.sf(threshold,
    loc=mean,
    scale=sd))',
      'return float(1 - stats.norm.cdf((threshold - mean)
      /
      sd))'),
    M(4, 'randomized_response',
      'other = rng.integers(0, k - 1, size=n_rows)\n'
      '    other = other + (other >= best)',
      'other = (best + rng.integers(1, k, size=n_rows)) % k'),
    M(4, 'report_noisy_max', 'noisy = q +
    rng.gumbel(size=q.shape)
    *
    scale',
      'noisy = q - scale * np.log(-np.log(rng.random(q.shape)))'),
    M(4, 'report_noisy_max', 'noisy = q +
    rng.gumbel(size=q.shape)
    *
    scale',
      'noisy = q / scale + rng.gumbel(size=q.shape)'),
    M(4, 'privacy_loss', 'return
    float(np.max(np.abs(np.log(p[seen])
    -
    np.log(p_prime[seen]))))',
      'return float(max(abs(np.log(x / y)) for x, y in
      zip(p[seen],
      p_prime[seen])))'),
    M(4, 'expected_utility_krr', 'return float(p_best * best + (1 -
    p_best)
    *
    others_mean)',
      'probs = np.full(k, (1 - p_best) / (k - 1))\n' '    probs[np.argmax(q)]
      =
      p_best\n'
      '    return float(probs
      @
      q)'),
    M(5, 'dyadic_decomposition',
      'return [(level, (n >> level) - 1) for level in range(n.bit_length()) if (n >> level) & 1]',
      'nodes, start, rest = [], 0, n\n' '    for level in reversed(range(n.bit_length())):\n'
      '        if rest >= 2**level:\n' '            nodes.append((level, start >> level))\n'
      '            start += 2**level\n' '            rest -= 2**level\n' '    return nodes'),
    M(5, 'binary_mechanism', 'levels = horizon.bit_length()  # floor(log2
    T)
    +
    1',
      'levels = int(np.floor(np.log2(horizon))) + 1'),
    M(5, 'naive_prefix_sums', 'return np.cumsum(x + rng.laplace(scale=1.0
    /
    epsilon,
    size=x.size))',
      'noise = rng.laplace(0.0, 1.0 / epsilon, x.size)\n  
      
      return
      np.cumsum(x)
      +
      np.cumsum(noise)'),
    M(6, 'permute_and_flip', 'order
    =
    np.argsort(rng.random((n_rows,
    k)),
    axis=1)',
      'order = rng.permuted(np.tile(np.arange(k), (n_rows,
      1)),
      axis=1)'),
    M(6, 'make_agent',
    'return
    agents.PrivateAgent(selector)',
      'return agents.PrivateAgent(selector=selector, epsilon_means=1.0)'),
    M(6, 'compare',
      '    for eps in epsilons:\n'
      '        players[f"PF eps={eps:g}"] = make_agent(eps)\n',
      '    players.update({f"PF eps={e:g}": make_agent(e) for e in epsilons})\n'),
]
# fmt: on
