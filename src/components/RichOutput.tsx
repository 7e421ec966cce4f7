import type { MimeBundle } from "../../workers/python-api";
import { Markdown } from "./Markdown";
import { SandboxedHtml } from "./SandboxedHtml";

/** Show the richest representation in a mime bundle, IPython's order of preference. */
export function RichOutput({ data }: { data: MimeBundle }) {
  const alt = data["text/plain"] ?? "Image output";
  if (data["image/png"]) return <img className="image-output" alt={alt} src={`data:image/png;base64,${data["image/png"]}`} />;
  if (data["image/jpeg"]) return <img className="image-output" alt={alt} src={`data:image/jpeg;base64,${data["image/jpeg"]}`} />;
  if (data["image/svg+xml"]) {
    // As an <img>, an SVG's scripts never run.
    return (
      <img
        className="image-output"
        alt={alt}
        src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(data["image/svg+xml"])}`}
      />
    );
  }
  if (data["text/html"]) return <SandboxedHtml html={data["text/html"]} />;
  if (data["text/markdown"]) return <Markdown source={data["text/markdown"]} />;
  if (data["application/json"]) return <pre className="json-output">{prettyJson(data["application/json"])}</pre>;
  if (data["text/latex"]) return <pre className="text-output">{data["text/latex"]}</pre>;
  return <pre className="text-output">{data["text/plain"] ?? ""}</pre>;
}

function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
