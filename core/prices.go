package core

// ModelPrices are a model's prices in US dollars per million tokens, as the
// user declares them (PRV-11 cost figures). Input and output are required;
// cached input and cache writes fall back to the input price when unset.
type ModelPrices struct {
	// InputPerMillion prices input tokens that are neither cache reads nor
	// cache writes.
	InputPerMillion float64 `json:"inputPerMillion"`
	// CachedInputPerMillion prices cache-read input tokens (Usage.CachedTokens).
	CachedInputPerMillion *float64 `json:"cachedInputPerMillion,omitempty"`
	// CacheWritePerMillion prices input tokens written to the prompt cache
	// (Usage.CacheWriteTokens).
	CacheWritePerMillion *float64 `json:"cacheWritePerMillion,omitempty"`
	// OutputPerMillion prices output tokens (reasoning included).
	OutputPerMillion float64 `json:"outputPerMillion"`
}

// MaxPricePerMillion bounds a declared price (a guard against typos such as
// a price per token entered as a price per million, the other way round).
const MaxPricePerMillion = 100_000

// Cost computes what u cost at prices p, in US dollars: plain input tokens
// (input minus cache reads minus cache writes) at the input price, cache
// reads at the cached-input price, cache writes at the cache-write price,
// output tokens at the output price.
func (p ModelPrices) Cost(u Usage) float64 {
	cached := max(u.CachedTokens, 0)
	writes := max(u.CacheWriteTokens, 0)
	plain := max(u.InputTokens-cached-writes, 0)
	cachedPrice, writePrice := p.InputPerMillion, p.InputPerMillion
	if p.CachedInputPerMillion != nil {
		cachedPrice = *p.CachedInputPerMillion
	}
	if p.CacheWritePerMillion != nil {
		writePrice = *p.CacheWritePerMillion
	}
	micro := float64(plain)*p.InputPerMillion + float64(cached)*cachedPrice +
		float64(writes)*writePrice + float64(max(u.OutputTokens, 0))*p.OutputPerMillion
	return micro / 1e6
}
