import DOMPurify from "dompurify";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import { Marked } from "marked";
import { useMemo } from "react";

/** The languages highlighted in fenced code blocks (with their usual aliases: ts, js, sh, py, html, yml, ...); others stay plain. */
const LANGUAGES = { bash, css, diff, go, javascript, json, python, rust, sql, typescript, xml, yaml };
for (const [name, language] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, language);

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const markdown = new Marked({
  gfm: true,
  breaks: false,
  renderer: {
    code({ text, lang }) {
      const name = (lang ?? "").trim().split(/\s+/)[0]!.toLowerCase();
      const known = name !== "" && hljs.getLanguage(name) !== undefined;
      const body = known ? hljs.highlight(text, { language: name, ignoreIllegals: true }).value : escapeHtml(text);
      const cls = known ? ` class="hljs language-${escapeHtml(name)}"` : "";
      return `<pre><code${cls}>${body}\n</code></pre>\n`;
    },
  },
});

/** Markdown from agents, code blocks highlighted, sanitized before it reaches the DOM. */
export function Markdown({ text }: { readonly text: string }) {
  const html = useMemo(() => DOMPurify.sanitize(markdown.parse(text, { async: false })), [text]);
  return <div className="markdown" dangerouslySetInnerHTML={{ __html: html }} />;
}
