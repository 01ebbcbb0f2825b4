// Package termlogin runs an agent's terminal login (ACP's auth method of type "terminal") for one principal:
// the agent's own command with the method's args and env, in a PTY, confined as the agent is, with the HOME
// the principal's sessions of that agent use, for a bounded time. Its output may echo what the user types
// (codes, keys), so it is held in memory for the principal's sockets only: never logged, never stored.
package termlogin
