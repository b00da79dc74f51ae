package core

import (
	"context"
	"time"
)

// KernelUsageRecorder writes a usage ledger row that belongs to no session:
// spending of the kernel itself, such as generateImage or generateVideo
// called without a sessionId. It counts in usageTotals.
type KernelUsageRecorder interface {
	RecordKernelUsage(ctx context.Context, p UsagePayload, at time.Time) error
}
