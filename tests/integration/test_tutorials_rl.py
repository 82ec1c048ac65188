"""A stand-in for the PyTorch tutorial "Reinforcement Learning (DQN)"
(intermediate_source/reinforcement_q_learning.py), written here in our own words with the
same calls, arguments and idioms, run under torch 2.13 and under ember from the same seeds:
it prints the same episode lengths, losses and moving averages.

Its idioms: a replay memory of ``namedtuple`` transitions in a ``deque``; epsilon-greedy
actions from ``policy_net(state).max(1).indices.view(1, 1)``; a batch assembled with
``torch.cat`` and a boolean mask built from ``tuple(map(...))``; ``gather``; a masked
assignment of ``target_net(...).max(1).values`` under ``no_grad``; ``SmoothL1Loss``;
``AdamW(amsgrad=True)``; ``clip_grad_value_``; the soft update written on ``state_dict``
entries and loaded back; ``unfold(0, k, 1).mean(1)`` for the moving average.
The environment is ``examples_harness.CartPole`` (gymnasium's CartPole-v1 dynamics).
"""
import contextlib
import io
import math
import random
from collections import deque, namedtuple
from itertools import count

import torch

import ember
from examples_harness import CartPole, assert_same_output

Transition = namedtuple('Transition', ('state', 'action', 'next_state', 'reward'))


class Environment(CartPole):
    """CartPole with gymnasium's ``action_space`` (two actions, drawn from the task's seed)."""

    def __init__(self):
        super().__init__(threshold=475)
        env = self

        class ActionSpace:
            n = 2

            def sample(self):
                return int(env.rng.integers(2))

        self.action_space = ActionSpace()


def dqn(torch):
    nn, optim, F = torch.nn, torch.optim, torch.nn.functional
    device = torch.device("cuda" if torch.cuda.is_available() else
                          "mps" if torch.backends.mps.is_available() else "cpu")
    env = Environment()

    class ReplayMemory(object):
        def __init__(self, capacity):
            self.memory = deque([], maxlen=capacity)

        def push(self, *args):
            self.memory.append(Transition(*args))

        def sample(self, batch_size):
            return random.sample(self.memory, batch_size)

        def __len__(self):
            return len(self.memory)

    class DQN(nn.Module):
        def __init__(self, n_observations, n_actions):
            super(DQN, self).__init__()
            self.layer1 = nn.Linear(n_observations, 32)
            self.layer2 = nn.Linear(32, 32)
            self.layer3 = nn.Linear(32, n_actions)

        def forward(self, x):
            x = F.relu(self.layer1(x))
            x = F.relu(self.layer2(x))
            return self.layer3(x)

    BATCH_SIZE, GAMMA, EPS_START, EPS_END, EPS_DECAY, TAU, LR = 16, 0.99, 0.9, 0.05, 200, 0.005, 1e-3
    n_actions = env.action_space.n
    state, info = env.reset(seed=7)
    policy_net = DQN(len(state), n_actions).to(device)
    target_net = DQN(len(state), n_actions).to(device)
    target_net.load_state_dict(policy_net.state_dict())
    optimizer = optim.AdamW(policy_net.parameters(), lr=LR, amsgrad=True)
    memory = ReplayMemory(1000)
    steps_done = 0

    def select_action(state):
        nonlocal steps_done
        eps_threshold = EPS_END + (EPS_START - EPS_END) * math.exp(-1. * steps_done / EPS_DECAY)
        steps_done += 1
        if random.random() > eps_threshold:
            with torch.no_grad():
                return policy_net(state).max(1).indices.view(1, 1)
        return torch.tensor([[env.action_space.sample()]], device=device, dtype=torch.long)

    losses = []

    def optimize_model():
        if len(memory) < BATCH_SIZE:
            return
        batch = Transition(*zip(*memory.sample(BATCH_SIZE)))
        non_final_mask = torch.tensor(tuple(map(lambda s: s is not None, batch.next_state)), device=device,
                                      dtype=torch.bool)
        non_final_next_states = torch.cat([s for s in batch.next_state if s is not None])
        state_batch = torch.cat(batch.state)
        action_batch = torch.cat(batch.action)
        reward_batch = torch.cat(batch.reward)
        state_action_values = policy_net(state_batch).gather(1, action_batch)
        next_state_values = torch.zeros(BATCH_SIZE, device=device)
        with torch.no_grad():
            next_state_values[non_final_mask] = target_net(non_final_next_states).max(1).values
        expected_state_action_values = (next_state_values * GAMMA) + reward_batch
        criterion = nn.SmoothL1Loss()
        loss = criterion(state_action_values, expected_state_action_values.unsqueeze(1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100)
        optimizer.step()
        losses.append(loss.item())

    episode_durations = []
    for i_episode in range(12):
        state, info = env.reset()
        state = torch.tensor(state, dtype=torch.float32, device=device).unsqueeze(0)
        for t in count():
            action = select_action(state)
            observation, reward, terminated, truncated, _ = env.step(action.item())
            reward = torch.tensor([reward], device=device)
            done = terminated or truncated
            next_state = None if terminated else torch.tensor(observation, dtype=torch.float32,
                                                              device=device).unsqueeze(0)
            memory.push(state, action, next_state, reward)
            state = next_state
            optimize_model()
            target_net_state_dict = target_net.state_dict()
            policy_net_state_dict = policy_net.state_dict()
            for key in policy_net_state_dict:
                target_net_state_dict[key] = policy_net_state_dict[key] * TAU + target_net_state_dict[key] * (1 - TAU)
            target_net.load_state_dict(target_net_state_dict)
            if done:
                episode_durations.append(t + 1)
                break
        print(f"episode {i_episode}: {t + 1} steps, mean loss {sum(losses[-t - 1:]) / max(len(losses[-t - 1:]), 1):.6f}")
    durations_t = torch.tensor(episode_durations, dtype=torch.float)
    means = durations_t.unfold(0, 4, 1).mean(1).view(-1)
    means = torch.cat((torch.zeros(3), means))
    print(durations_t.numpy().tolist(), means.numpy().round(4).tolist())
    print(policy_net(torch.zeros(1, 4)).detach())


def printed(lib):
    out = io.StringIO()
    lib.manual_seed(0)
    random.seed(0)
    with contextlib.redirect_stdout(out):
        dqn(lib)
    return out.getvalue()


def test_dqn_tutorial_prints_torchs_episodes_and_losses():
    t_out, e_out = printed(torch), printed(ember)
    assert "episode 11:" in e_out
    assert_same_output(e_out, t_out, rtol=1e-4, atol=1e-6)
