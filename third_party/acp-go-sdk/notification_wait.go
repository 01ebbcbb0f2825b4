package acp

import "context"

// acp-gateway patch: the exact notification watermark, exposed so a client can keep wire order between
// notifications (handled on one goroutine) and requests (each on its own goroutine).

// notificationsBeforeKey keys, in an inbound request's context, how many notifications were read from the
// peer before that request.
type notificationsBeforeKey struct{}

// WaitNotificationsBefore blocks until every notification read before the inbound request whose handler
// context is ctx has been handled, or ctx ends. With any other context it returns at once.
func (c *Connection) WaitNotificationsBefore(ctx context.Context) error {
	seq, _ := ctx.Value(notificationsBeforeKey{}).(uint64)
	return c.WaitNotificationsHandled(ctx, seq)
}

// WaitNotificationsHandled blocks until the first seq notifications read from the peer have been handled, or
// ctx ends. Unlike the wait behind SendRequest it keeps waiting after the peer disconnects: notifications
// already read are still handled then.
func (c *Connection) WaitNotificationsHandled(ctx context.Context, seq uint64) error {
	stop := context.AfterFunc(ctx, func() {
		c.notifyMu.Lock()
		c.notifyCond.Broadcast()
		c.notifyMu.Unlock()
	})
	defer stop()
	c.notifyMu.Lock()
	defer c.notifyMu.Unlock()
	for c.completedNotificationSeq < seq {
		if ctx.Err() != nil {
			return toReqErr(context.Cause(ctx))
		}
		c.notifyCond.Wait()
	}
	return nil
}

// NotificationsRead is how many notifications have been read from the peer so far (handled or queued).
func (c *Connection) NotificationsRead() uint64 {
	c.notifyMu.Lock()
	defer c.notifyMu.Unlock()
	return c.lastEnqueuedNotificationSeq
}

// responseWatermarkKey keys, in a SendRequest context, the function told how many notifications preceded
// the response.
type responseWatermarkKey struct{}

// WithResponseWatermark returns a context for SendRequest that makes it call fn with how many notifications
// were read from the peer before the request's response (an error response too: isError), on the reading
// goroutine, before anything read after the response is queued. A notification handler that compares
// HandlingNotification with that number therefore knows, exactly and in wire order, whether its
// notification came before or after the response, however late the caller of SendRequest runs. fn must not
// block; it is not called when no response arrives.
func WithResponseWatermark(ctx context.Context, fn func(notificationsBefore uint64, isError bool)) context.Context {
	return context.WithValue(ctx, responseWatermarkKey{}, fn)
}

// HandlingNotification is the sequence number (1 for the first notification read from the peer) of the
// notification whose handler is running. Only a notification handler may call it.
func (c *Connection) HandlingNotification() uint64 {
	return c.handlingNotificationSeq.Load()
}

// HandleNotificationsInline makes the goroutine that reads the peer's messages handle each notification
// itself, in wire order, instead of handing it to the notification goroutine through the queue: one
// goroutine wake-up less per notification, no copy of its params, and the peer's output is read no further
// than the handler got (the back-pressure a full queue gives, at once). The params a notification handler
// gets are then only valid until it returns (they are the read buffer, as bufio.Scanner.Bytes): a handler
// that keeps them, or anything sliced from them, must copy. Sequence numbers, WaitNotificationsBefore,
// WaitNotificationsHandled, HandlingNotification and response watermarks mean what they meant.
//
// The handler then runs where responses are read: a notification handler must not wait for a response from
// the peer, nor for anything else that needs this connection to read (with the queue, it only must not block
// for long). Notifications queued before the switch are handled first.
func (c *Connection) HandleNotificationsInline() {
	c.inlineNotifications.Store(true)
}

// handleNotificationInline handles a notification on the reading goroutine, after any the queue still holds.
func (c *Connection) handleNotificationInline(seq uint64, msg *anyMessage) {
	c.notifyMu.Lock()
	for c.completedNotificationSeq+1 < seq {
		c.notifyCond.Wait()
	}
	c.notifyMu.Unlock()
	c.handleNotification(seq, msg)
}
