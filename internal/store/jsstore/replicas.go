package jsstore

import (
	"errors"

	"github.com/nats-io/nats.go/jetstream"
)

// ErrReplicasUnsupported is wrapped by Open and Connect when the server is not clustered and so cannot keep
// more than one copy of a stream or bucket (JetStream's error 10074).
var ErrReplicasUnsupported = errors.New("jsstore: replicas > 1 not supported by a non-clustered NATS server")

// errCodeReplicasNotSupported is nats-server's JSStreamReplicasNotSupportedErr.
const errCodeReplicasNotSupported jetstream.ErrorCode = 10074

// classifyReplicas wraps err with ErrReplicasUnsupported when it is JetStream's "replicas > 1 not supported
// in non-clustered mode", keeping the server's text.
func classifyReplicas(err error) error {
	var api *jetstream.APIError
	if errors.As(err, &api) && api.ErrorCode == errCodeReplicasNotSupported {
		return errors.Join(ErrReplicasUnsupported, err)
	}
	return err
}
