package sessions

// Internal helpers the package's external tests (sessions_test, which may import internal/store/jsstore)
// share with the internal ones.

// TestAgentBin builds internal/testagent once for the package's tests.
var TestAgentBin = testAgentBin
