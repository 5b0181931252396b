import puppeteer from "puppeteer-core";
const t0 = performance.now();
const browser = await puppeteer.launch({ executablePath: "/usr/bin/chromium", headless: true, args: ["--no-sandbox", "--disable-gpu"] });
const page = await browser.newPage();
await page.setContent("<h1>hi</h1>");
console.log(await page.$eval("h1", (e) => e.textContent), performance.now() - t0);
await browser.close();
