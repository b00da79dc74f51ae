package catalog

import (
	"fmt"
	"github.com/foya-dev/foya/core"
	"math"
)

func clonePrices(p *core.ModelPrices) *core.ModelPrices {
	if p == nil {
		return nil
	}
	out := *p
	out.CachedInputPerMillion = clonePtr(p.CachedInputPerMillion)
	out.CacheWritePerMillion = clonePtr(p.CacheWritePerMillion)
	return &out
}

func validatePrices(p *core.Problems, field string, prices *core.ModelPrices) {
	if prices == nil {
		return
	}
	for _, v := range []struct {
		name string
		v    *float64
	}{
		{"inputPerMillion", &prices.InputPerMillion},
		{"cachedInputPerMillion", prices.CachedInputPerMillion},
		{"cacheWritePerMillion", prices.CacheWritePerMillion},
		{"outputPerMillion", &prices.OutputPerMillion},
	} {
		if v.v == nil {
			continue
		}
		if math.IsNaN(*v.v) || math.IsInf(*v.v, 0) || *v.v < 0 || *v.v > core.MaxPricePerMillion {
			p.Add(field+".prices."+v.name, "must be a price in US dollars per million tokens from 0 to %d (got %s)", core.MaxPricePerMillion, fmt.Sprint(*v.v))
		}
	}
}
