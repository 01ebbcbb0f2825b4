package httpapi

import "github.com/acp-gateway/gateway/internal/translate/ask"

type translateAnswer = ask.ClientAnswer
