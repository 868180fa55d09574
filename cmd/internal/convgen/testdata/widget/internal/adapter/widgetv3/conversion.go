package widgetv3

import (
	"strconv"

	pb "github.com/csi-node-proxy/csi-node-proxy/cmd/internal/convgen/testdata/widget/api/widget/v3"
	"github.com/csi-node-proxy/csi-node-proxy/cmd/internal/convgen/testdata/widget/groups/widget"
)

// v3 called Get Fetch; its scope meant nothing and its error was never set.
//
//convgen:rename Fetch=Get
//convgen:ignore scope Error

// toModelFetchRequest parses v3's decimal number, which can fail.
func toModelFetchRequest(in *pb.FetchRequest) (*widget.GetRequest, error) {
	n, err := strconv.ParseUint(in.Number, 10, 32)
	if err != nil {
		return nil, err
	}
	out := autoToModelFetchRequest(in)
	out.Number = uint32(n)
	return out, nil
}

// fromModelFetchResponse keys by_number by decimal strings; it calls the
// generated fromModelPart.
func fromModelFetchResponse(in *widget.GetResponse) *pb.FetchResponse {
	out := autoFromModelFetchResponse(in)
	out.ByNumber = make(map[string]*pb.Part, len(in.ByNumber))
	for k, v := range in.ByNumber {
		out.ByNumber[strconv.FormatUint(uint64(k), 10)] = fromModelPart(v)
	}
	return out
}
