package chain

import (
	"context"

	"github.com/garm-dev/garm/daemon/internal/call"
	rowstep "github.com/garm-dev/garm/daemon/internal/chain/ledger"
	"github.com/garm-dev/garm/daemon/internal/chain/limit"
	"github.com/garm-dev/garm/daemon/internal/deny"
	"github.com/garm-dev/garm/daemon/internal/tracing"
)

// limit counts the call against its tool's limits into st.counted, and
// names on the row the limit that refused it.
func (c *Chain) limit(ctx context.Context, limits []*limit.Limit, p *call.Principal, st *state) error {
	if c.Limits == nil {
		return deny.Fail(deny.LimitUnavailable, deny.KindLimitUnavailable, "the tool declares limits and this chain counts none")
	}
	_, span := c.Tracer.StartStep(ctx, tracing.StepLimit)
	refusing, err := c.Limits.Admit(ctx, limits, p, &st.counted)
	tracing.EndStep(span, err)
	if err != nil {
		rowstep.Limit(st.row, refusing.ID, refusing.KeyName)
		if c.LimitRefused != nil {
			c.LimitRefused(refusing.Tool, refusing.ID)
		}
	}
	return err
}
