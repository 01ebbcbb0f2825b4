// Package login is agent login from a client (GET, PUT and DELETE /v1/agents/{agent}/login): what an agent
// offers, the variables or agent method a principal completes, and logout, each on an agent process of its
// own. It holds no session state and is apart from the registry: what it needs of it is Host.
package login
