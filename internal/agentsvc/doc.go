// Package agentsvc holds the services the gateway gives a session's agent as its ACP client: files inside
// the session's working directory (fs/read_text_file, fs/write_text_file) and terminals (terminal/*), and
// the listing of directories a person may pick as a session's cwd (ListDirs). It keeps no session state: the session decides who serves a request (itself or a delegate client), logs
// what clients must see, and hands these services the rest.
package agentsvc
