FROM node:22-bookworm
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm install --no-audit --no-fund
COPY . .
RUN npm run build
EXPOSE 2333
CMD ["node", "dist/apps/api/src/standalone.js"]
