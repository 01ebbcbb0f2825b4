package httpapi

import "github.com/acp-gateway/gateway/internal/translate"

type translateAnswer = translate.ClientAnswer
