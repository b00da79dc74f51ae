package openai

import (
	"encoding/json"
	"reflect"
	"testing"
)

var chunkSeeds = []string{
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"c","choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}],"usage":null}`,
	`{"id":"c","choices":[{"index":1,"delta":{"reasoning_content":"think","content":null}}]}`,
	`{"choices":[{"delta":{"reasoning":"r"}}],"model":null}`,
	`{"choices":[]}`,
	`{"choices":null}`,
	`{"choices":[{"index":0,"delta":{"content":"tab\tand \"quote\" \u00e9"}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"read","arguments":"{\"p\":1}"}}]}}]}`,
	`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":5,"total_tokens":8}}`,
	`{"error":{"message":"boom","type":"server_error"}}`,
	`{"Choices":[{"index":0,"delta":{"content":"case"}}]}`,
	`{"choices":[{"index":0,"delta":{"Content":"case"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a"}}],"choices":[{"index":0,"delta":{"content":"b"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a","content":"b"}}]}`,
	`{"choices":[{"index":2.0,"delta":{"content":"x"}}]}`,
	`{"choices":[{"index":12345678901,"delta":{"content":"x"}}]}`,
	`{"choices":[{"index":-1,"delta":{"content":"x"}}]}`,
	`{"choices":[{"index":0,"delta":null,"finish_reason":"length"}]}`,
	`{"choices":[{"index":0,"delta":{"content":"x"}}]} trailing`,
	`{"choices":[{"index":0,"delta":{"content":"x"}}]`,
	`{"choices":[{"index":0,"delta":{"content":"\xff"}}]}`,
	`{"x":{"a":[1,2,{"b":"}"}]},"y":"]","choices":[{"index":0,"delta":{"content":"nested"}}]}`,
	`{"choices":[{"index":0,"message":{"content":"whole"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"x"},"ſinish_reason":"stop"}]}`,
	`{"choices":[{"index":0,"delta":{"content":7}}]}`,
	` { "choices" : [ { "index" : 0 , "delta" : { "content" : "spaced" } } ] } `,
	`null`,
	`[]`,
	`{"choices":[{"index":0,"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"hm"}]},{"type":"text","text":"3"}]}}]}`,
	`{"choices":[{"index":0,"delta":{"content":null,"refusal":"no"}}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning_content":[{"type":"text","text":"r"}],"content":[{"type":"refusal","refusal":"x"},"bare",{"type":"image_url"}]}}]}`,
	`{"choices":[{"index":0,"delta":{"content":{"text":"x"}}}]}`,
	`{"object":"error","message":"bad","type":"BadRequestError","code":400}`,
	`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"x","refusal":null}}]}`,
	`{"choices":[{"index":0,"delta":{"content":[{"type":"thinking","thinking":[[[[[[{"type":"text","text":"deep"}]]]]]]}]}}]}`,
}

// decodeChunk gives what encoding/json gives, for every input: the same
// value, or an error where encoding/json has one.
func FuzzDecodeChunk(f *testing.F) {
	for _, s := range chunkSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got, want chatChunk
		gotErr := decodeChunk(data, &got)
		wantErr := json.Unmarshal(data, &want)
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("%q: error %v, encoding/json %v", data, gotErr, wantErr)
		}
		if wantErr == nil && !reflect.DeepEqual(got, want) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			t.Fatalf("%q:\n got %s\nwant %s", data, g, w)
		}
	})
}

// The common chunk shapes take the fast path.
func TestFastChunkTakesCommonShapes(t *testing.T) {
	for _, s := range chunkSeeds[:7] {
		var c chatChunk
		if !fastChunk([]byte(s), &c) {
			t.Errorf("%s: not decoded by the fast path", s)
		}
	}
}
