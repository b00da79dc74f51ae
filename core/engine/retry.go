package engine

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/telemetry"
)

// RetryPolicy bounds how a turn retries a model request that failed before
// any output arrived (rate limits, overload, server and network errors).
// Zero fields take the documented defaults.
type RetryPolicy struct {
	// MaxAttempts is the number of requests per model step, the first one
	// included (default 5; 1 disables retries).
	MaxAttempts int
	// MaxTotalWait bounds the sum of the waits of one model step (default
	// 2 minutes). A wait that would cross it is not scheduled: the step fails.
	MaxTotalWait time.Duration
	// BaseDelay is the first backoff delay (default 1s); it doubles per
	// attempt up to MaxDelay (default 30s), with ±20% jitter. A provider's
	// Retry-After wins when it is longer.
	BaseDelay time.Duration
	MaxDelay  time.Duration
	// Sleep waits d or until ctx ends (default: a timer). Tests inject one
	// that returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter returns a factor in [0.8, 1.2) (default: random). Tests may fix it.
	Jitter func() float64
}

// Defaults of RetryPolicy.
const (
	DefaultRetryMaxAttempts  = 5
	DefaultRetryMaxTotalWait = 2 * time.Minute
	DefaultRetryBaseDelay    = time.Second
	DefaultRetryMaxDelay     = 30 * time.Second
)

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultRetryMaxAttempts
	}
	if p.MaxTotalWait <= 0 {
		p.MaxTotalWait = DefaultRetryMaxTotalWait
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = DefaultRetryBaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = DefaultRetryMaxDelay
	}
	if p.Sleep == nil {
		p.Sleep = sleepCtx
	}
	if p.Jitter == nil {
		p.Jitter = func() float64 { return 0.8 + 0.4*rand.Float64() }
	}
	return p
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// retryable reports whether a failed request may be sent again: transient
// failures only. Quota, auth, bad requests, output limits and context
// overflow never retry (overflow has its own single compaction, PRV-12).
func retryable(err error) (*core.ProviderError, bool) {
	var perr *core.ProviderError
	if !errors.As(err, &perr) {
		return nil, false
	}
	switch perr.Category {
	case core.ProviderRateLimit, core.ProviderThrottling, core.ProviderServer, core.ProviderNetwork:
		return perr, true
	}
	return perr, false
}

// delay is the wait before attempt n+1 (n >= 1 failed attempts so far).
func (p RetryPolicy) delay(n int, retryAfter time.Duration) time.Duration {
	d := p.BaseDelay
	for i := 1; i < n && d < p.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, p.MaxDelay)
	d = time.Duration(float64(d) * p.Jitter())
	if retryAfter > d {
		d = retryAfter // the service said when; never earlier
	}
	return d
}

// streamWithRetry runs one model step's request, sending it again after a
// transient failure that produced no output at all (no text, reasoning or
// tool call), with exponential backoff and jitter, honouring Retry-After,
// within the policy's attempt and total-wait bounds. Each wait is announced
// by a live retry_scheduled event. The request is never recompiled, so a
// retry never compacts. Only the final attempt's usage is recorded.
//
// The attempts are one model call span (docs/telemetry.md), each retry an
// event on it.
//
// A turn's goroutine waits for the provider's next chunk inside this call
// for most of its life: the functions down to stream's Recv take b and req
// by pointer and keep what they do only before or after the stream in
// functions of their own, so that the goroutine's stack is shallow while it
// waits and the runtime can shrink it (a stack is halved at a collection
// when less than a quarter of it is in use). See BENCHMARKS.md, "Goroutine
// stacks of the 100-stream peak".
func (e *Engine) streamWithRetry(ctx context.Context, sessionID, turnID string, b *boundModel, req *core.ProviderRequest, left int64) streamResult {
	started := time.Now()
	ctx, sp := startChatSpan(ctx, b, req)
	res := e.streamAttempts(ctx, sessionID, turnID, b, req, left)
	endChatSpan(sp, b, req, &res, started)
	return res
}

func (e *Engine) streamAttempts(ctx context.Context, sessionID, turnID string, b *boundModel, req *core.ProviderRequest, left int64) streamResult {
	var waited time.Duration
	for attempt := 1; ; attempt++ {
		res := e.stream(ctx, sessionID, b, req, left)
		if res.err == nil || res.cancelled || res.limit != nil || res.text != "" || res.reasoning != "" || len(res.calls) > 0 {
			return res
		}
		if !e.retryAfterFailure(ctx, sessionID, turnID, b, &res, attempt, &waited) {
			return res
		}
	}
}

// retryAfterFailure decides on attempt's failed result res: false with res
// as the call's outcome (not retryable, out of attempts or of the retry
// bound, or cancelled while waiting), true once the wait before the next
// attempt is over.
func (e *Engine) retryAfterFailure(ctx context.Context, sessionID, turnID string, b *boundModel, res *streamResult, attempt int, waited *time.Duration) bool {
	p := e.retry
	perr, ok := retryable(res.err)
	if !ok {
		return false
	}
	reason := core.ScrubSecret(failureReason(res.err), b.endpoint.APIKey)
	if attempt >= p.MaxAttempts {
		if attempt > 1 {
			res.err = &core.ProviderError{Category: perr.Category, StatusCode: perr.StatusCode, RetryAfter: perr.RetryAfter,
				Message: perr.Message + " (gave up after " + strconv.Itoa(attempt) + " attempts)"}
		}
		return false // retries disabled (MaxAttempts 1): the error as it came
	}
	d := p.delay(attempt, perr.RetryAfter)
	if *waited+d > p.MaxTotalWait {
		res.err = &core.ProviderError{Category: perr.Category, StatusCode: perr.StatusCode, RetryAfter: perr.RetryAfter,
			Message: perr.Message + " (not retried: waiting " + d.Round(time.Millisecond).String() + " more would exceed the retry bound of " + p.MaxTotalWait.String() + ")"}
		return false
	}
	*waited += d
	telemetry.FromContext(ctx).Event("gen_ai.retry", telemetry.Int("foya.retry.attempt", int64(attempt+1)),
		telemetry.String("error.type", string(perr.Category)), telemetry.Float("foya.retry.delay", d.Seconds()))
	e.log.InfoContext(ctx, "model request retry scheduled", "session_id", sessionID, "turn_id", turnID, "attempt", attempt+1, "delay", d, "category", string(perr.Category))
	e.svc.Emit(sessionID, core.EventRetryScheduled, core.RetryPayload{
		TurnID: turnID, Attempt: attempt + 1, MaxAttempts: p.MaxAttempts, DelayMs: d.Milliseconds(),
		Category: perr.Category, Reason: reason, RetryAfterMs: perr.RetryAfter.Milliseconds(),
	})
	if err := p.Sleep(ctx, d); err != nil || ctx.Err() != nil {
		*res = streamResult{cancelled: true}
		return false
	}
	return true
}
